package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * {@link TestNicExtension}: fixtures injected as parameters, strict mode reported when each test ends. The tests of
 * {@link Users} are run through the JUnit engine here, so that a test the extension fails can be asserted on.
 */
class TestNicExtensionTest
{
    /** Tests as a user writes them; run only through {@link #run} (surefire skips nested classes). */
    @ExtendWith(TestNicExtension.class)
    @NicProfile("connectx3")
    static class Users
    {
        static volatile String profileSeen;
        static volatile StrictMode strictSeen;
        static volatile TestNic nicSeen;

        @Test
        void writesBetweenTheTwoHosts(final TestNic nic, final StrictMode strict)
        {
            final long src = nic.alloc(Side.A, 4096);
            final long dst = nic.alloc(Side.B, 4096);
            try (MemoryRegion ms = nic.reg(Side.A, src, 4096, Access.LOCAL_WRITE);
                MemoryRegion md = nic.reg(Side.B, dst, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE))
            {
                nic.cpuWrite(Side.A, src, "hello".getBytes());
                final WorkCompletion wc = nic.write(ms, src, 5, dst, md.rkey());
                assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
                assertThat(new String(nic.cpuRead(Side.B, dst, 5))).isEqualTo("hello");
            }
            profileSeen = nic.profile().name();
            strictSeen = strict;
            nicSeen = nic;
        }

        @Test
        @NicProfile("connectx5")
        void leaksAnMrOnTwoHosts(final TestNic nic)
        {
            final long buf = nic.alloc(Side.B, 4096);
            nic.reg(Side.B, buf, 4096, Access.LOCAL_WRITE);
        }

        @Test
        void leaksAnMrOnOneDevice(final SimDevice device, final StrictMode strict)
        {
            final Context c = device.open();
            final long buf = c.memory().allocate(4096, Backing.BASE_PAGES);
            c.allocPd().regMr(buf, 4096, EnumSet.of(Access.LOCAL_WRITE));
            assertThat(strict.violations()).isEmpty();
        }

        @Test
        void deregistersOnOneDevice(final SimDevice device)
        {
            try (Context c = device.open())
            {
                final long buf = c.memory().allocate(4096, Backing.BASE_PAGES);
                c.allocPd().regMr(buf, 4096, EnumSet.of(Access.LOCAL_WRITE)).close();
            }
        }

        @Test
        void asksForStrictModeAlone(final StrictMode strict)
        {
            assertThat(strict).isNotNull();
        }
    }

    private static Map<String, TestExecutionResult> run()
    {
        final Map<String, TestExecutionResult> results = new LinkedHashMap<>();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request()
            .selectors(DiscoverySelectors.selectClass(Users.class))
            .filters(EngineFilter.includeEngines("junit-jupiter"))
            .build(), new TestExecutionListener()
            {
                @Override
                public void executionFinished(final TestIdentifier id, final TestExecutionResult result)
                {
                    id.getSource().filter(MethodSource.class::isInstance)
                        .ifPresent(s -> results.put(((MethodSource)s).getMethodName(), result));
                }
            });
        return results;
    }

    private static String failure(final TestExecutionResult r)
    {
        return r.getThrowable().map(t -> t.getClass().getSimpleName() + ": " + t.getMessage()).orElse("");
    }

    @Test
    void injectsFixturesOfTheAnnotatedProfileAndClosesThemAfterTheTest()
    {
        final Map<String, TestExecutionResult> r = run();
        assertThat(r.get("writesBetweenTheTwoHosts").getStatus()).as(failure(r.get("writesBetweenTheTwoHosts")))
            .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(Users.profileSeen).isEqualTo("connectx3");
        assertThat(Users.strictSeen).isNotNull();
        assertThat(Users.nicSeen.isClosed()).isTrue();
        assertThat(r.get("deregistersOnOneDevice").getStatus()).as(failure(r.get("deregistersOnOneDevice")))
            .isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
    }

    @Test
    void failsATestThatLeavesAnMrRegisteredNamingTheLeak()
    {
        final Map<String, TestExecutionResult> r = run();
        for (final String test : new String[] {"leaksAnMrOnTwoHosts", "leaksAnMrOnOneDevice"})
        {
            assertThat(r.get(test).getStatus()).as(test).isEqualTo(TestExecutionResult.Status.FAILED);
            assertThat(r.get(test).getThrowable()).get().isInstanceOf(AssertionError.class);
            assertThat(failure(r.get(test))).as(test).contains("LEAKED_MR");
        }
    }

    @Test
    void refusesAStrictModeWithoutAFixtureToWatch()
    {
        final TestExecutionResult r = run().get("asksForStrictModeAlone");
        assertThat(r.getStatus()).isEqualTo(TestExecutionResult.Status.FAILED);
        assertThat(failure(r)).contains("add a TestNic or a SimDevice parameter");
    }
}
