package dev.rnicsim.testkit;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that injects simulated RDMA fixtures into test methods, each in strict mode, and reports strict
 * mode when the test ends. Register it with {@code @ExtendWith(TestNicExtension.class)} and ask for any of:
 * <ul>
 * <li>{@link TestNic}: two simulated hosts with a device each and a connected RC QP pair
 * ({@link TestNic#start()}), in strict mode on both devices;</li>
 * <li>{@link SimDevice}: one device on one simulated host with the default {@code HostConfig} (16 GiB, RLIMIT_MEMLOCK
 * 8 MiB), in strict mode; {@code device.open()} opens it for a new process;</li>
 * <li>{@link StrictMode}: the strict mode of the test's {@code TestNic} when it asks for one, else of its
 * {@code SimDevice}, to set {@link StrictMode#maxRegistrationsPerSecond} or {@link StrictMode#ignore}.</li>
 * </ul>
 * The profile is {@code connectx5}, or the one {@link NicProfile} names. After each test the fixtures are closed:
 * every context still open is closed (so MRs left registered are reported as {@link Violation.Kind#LEAKED_MR}), then
 * strict mode throws an {@link AssertionError} listing every violation of the test, which fails it. Each test gets
 * new fixtures.
 */
public final class TestNicExtension implements ParameterResolver, AfterEachCallback
{
    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(TestNicExtension.class);

    /** The fixtures of one test, made on first need. */
    private static final class Fixtures
    {
        private final DeviceProfile profile;
        private TestNic nic;
        private StrictMode nicStrict;
        private SimDevice device;
        private StrictMode deviceStrict;

        Fixtures(final DeviceProfile profile)
        {
            this.profile = profile;
        }

        TestNic nic()
        {
            if (nic == null)
            {
                nic = TestNic.start(profile);
                nicStrict = nic.strict();
            }
            return nic;
        }

        SimDevice device()
        {
            if (device == null)
            {
                device = new SimFabric().addHost("host").addDevice("sim:host/" + profile.name(), profile);
                deviceStrict = StrictMode.attach(device);
            }
            return device;
        }

        /** Closes everything; the first failure is thrown, later ones suppressed in it. */
        void close()
        {
            final List<Throwable> failures = new ArrayList<>();
            if (nic != null)
            {
                try
                {
                    nic.close();
                }
                catch (final RuntimeException | AssertionError e)
                {
                    failures.add(e);
                }
            }
            if (device != null)
            {
                for (final SimContext c : List.copyOf(device.contexts()))
                {
                    try
                    {
                        c.close();
                    }
                    catch (final RuntimeException e)
                    {
                        failures.add(e);
                    }
                }
                try
                {
                    deviceStrict.close();
                }
                catch (final AssertionError e)
                {
                    failures.add(e);
                }
            }
            if (!failures.isEmpty())
            {
                final Throwable first = failures.get(0);
                for (final Throwable t : failures.subList(1, failures.size()))
                {
                    first.addSuppressed(t);
                }
                if (first instanceof AssertionError a)
                {
                    throw a;
                }
                throw (RuntimeException)first;
            }
        }
    }

    @Override
    public boolean supportsParameter(final ParameterContext parameter, final ExtensionContext context)
    {
        final Class<?> type = parameter.getParameter().getType();
        return type == TestNic.class || type == SimDevice.class || type == StrictMode.class;
    }

    @Override
    public Object resolveParameter(final ParameterContext parameter, final ExtensionContext context)
    {
        final Fixtures f = fixtures(context);
        final Class<?> type = parameter.getParameter().getType();
        if (type == TestNic.class)
        {
            return f.nic();
        }
        if (type == SimDevice.class)
        {
            return f.device();
        }
        final List<Class<?>> asked = Arrays.stream(parameter.getDeclaringExecutable().getParameters())
            .map(Parameter::getType).<Class<?>>map(c -> c).toList();
        if (asked.contains(TestNic.class))
        {
            f.nic();
            return f.nicStrict;
        }
        if (asked.contains(SimDevice.class))
        {
            f.device();
            return f.deviceStrict;
        }
        throw new ParameterResolutionException("a StrictMode parameter watches the test's fixture: add a TestNic or a "
            + "SimDevice parameter to " + parameter.getDeclaringExecutable().getName() + ", or attach one yourself "
            + "with StrictMode.attach(device)");
    }

    @Override
    public void afterEach(final ExtensionContext context)
    {
        final Fixtures f = context.getStore(NS).remove(Fixtures.class, Fixtures.class);
        if (f != null)
        {
            f.close();
        }
    }

    private static Fixtures fixtures(final ExtensionContext context)
    {
        return context.getStore(NS).getOrComputeIfAbsent(Fixtures.class, k -> new Fixtures(profile(context)),
            Fixtures.class);
    }

    private static DeviceProfile profile(final ExtensionContext context)
    {
        final String name = annotation(context.getTestMethod()).or(() -> annotation(context.getTestClass()))
            .map(NicProfile::value).orElse("connectx5");
        final DeviceProfile p = DeviceProfiles.builtIn().get(name);
        if (p == null)
        {
            throw new ParameterResolutionException("@NicProfile(\"" + name + "\") names no built-in profile; known: "
                + DeviceProfiles.builtIn().keySet());
        }
        return p;
    }

    private static Optional<NicProfile> annotation(final Optional<? extends AnnotatedElement> element)
    {
        return element.map(e -> e.getAnnotation(NicProfile.class));
    }
}
