package dev.rnicsim.testkit;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The lines of a scenario script that build the same fixture as a {@link TestNic}: hosts {@code a} and {@code b},
 * devices {@code nic_a} and {@code nic_b}, contexts {@code app_a} and {@code app_b}, {@code pd_a}, {@code cq_a},
 * {@code qp_a}, ... (the names the actions of {@link VerbsActions} print). Stateless.
 */
final class FixtureScript
{
    /** The statements made once per side, {@code %s} standing for the side's tag. */
    private static final List<String> PER_SIDE = List.of("open app_%s nic_%s", "pd pd_%s app_%s",
        "cq cq_%s app_%s " + TestNic.CQ_ENTRIES, "qp qp_%s pd_%s cq_%s");

    private FixtureScript()
    {
    }

    /**
     * @param profile      both devices' profile.
     * @param hostConfig   both hosts' configuration (its fork behaviour is written).
     * @param memlockBytes RLIMIT_MEMLOCK of both processes, or {@link UserProcess#RLIM_INFINITY}.
     * @param qpAccess     what each QP lets its peer do.
     * @return the script text, one statement a line.
     */
    static String of(final DeviceProfile profile, final HostConfig hostConfig, final long memlockBytes,
        final Set<Access> qpAccess)
    {
        final StringBuilder sb = new StringBuilder();
        final String memlock = memlockBytes == UserProcess.RLIM_INFINITY ? "unlimited" : Long.toString(memlockBytes);
        for (final Side s : Side.values())
        {
            sb.append("host ").append(s.tag()).append(" memlock=").append(memlock).append(" fork=")
                .append(hostConfig.forkBehaviour().name().toLowerCase(Locale.ROOT)).append('\n');
        }
        for (final Side s : Side.values())
        {
            sb.append("device nic_").append(s.tag()).append(' ').append(s.tag()).append(" profile=")
                .append(profile.name()).append('\n');
        }
        for (final String verb : PER_SIDE)
        {
            for (final Side s : Side.values())
            {
                sb.append(verb.replace("%s", s.tag())).append('\n');
            }
        }
        sb.append("connect qp_a qp_b access=").append(ScriptWords.accessWords(qpAccess)).append('\n');
        return sb.toString();
    }
}
