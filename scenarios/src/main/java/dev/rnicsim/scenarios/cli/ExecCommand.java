package dev.rnicsim.scenarios.cli;

import dev.rnicsim.ibverbs.FabricOrigin;
import dev.rnicsim.ibverbs.FabricServer;
import dev.rnicsim.ibverbs.ProgramLookup;
import dev.rnicsim.ibverbs.ProgramRunner;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.simnic.DevinfoResult;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code rnicsim exec}: runs an unmodified C program (any program linked with libibverbs) on a simulated device,
 * through the project's own {@code libibverbs.so.1} and a fabric server ({@link ProgramRunner}). It answers as a
 * shell does of the program it runs: its options follow it (parsing stops at the first positional), a program not
 * found ends the run with 127, one not executable with 126, a signal with 128 + its number and its name
 * ({@link ExecMessages}); and it refuses, before anything starts, to join a live fabric of other devices than those it
 * names, or with a trace of its own.
 */
@Command(name = "exec", mixinStandardHelpOptions = true,
    description = "Run an unmodified libibverbs program (ibv_rc_pingpong, perftest, your own) on a simulated "
        + "device: its buffers are its own, the keys, MTT, pinning and every check come from the simulator. "
        + "Programs run with the same --fabric share one fabric (a server and a client).",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"N:the program's exit status", "126:the program was found but is not executable",
        "127:the program was not found (the PATH searched is printed)",
        "128+N:the program was ended by signal N (SIGINT, SIGTERM and SIGHUP are sent on to it), or this run after "
            + "its program",
        "2:a bad command line, no such profile or dump, a live fabric of other devices or with --trace, or the "
            + "library cannot be started"})
final class ExecCommand implements Callable<Integer>
{
    @Option(names = {"-p", "--profile"}, paramLabel = "NAME",
        description = "The device: a built-in profile (default connectx5): ${COMPLETION-CANDIDATES}.",
        completionCandidates = DevinfoCommand.ProfileNames.class)
    private String profile;

    @Option(names = "--devinfo", paramLabel = "DUMP", description = "The device: a real 'ibv_devinfo -v' dump.")
    private Path devinfo;

    @Option(names = "--fabric", paramLabel = "NAME",
        description = "The fabric's name: programs run with one name share one fabric; the first starts it "
            + "(default: a fabric of this program alone).")
    private String fabric;

    @Option(names = "--netdev-mtu", paramLabel = "BYTES", description = "The MTU of the netdev the device's "
        + "Ethernet port sits on (default 1500): a RoCE or iWARP port's active_mtu follows it (9000: jumbo frames).",
        converter = MtuBytes.class)
    private Integer netdevMtu;

    /**
     * {@code --netdev-mtu}: a plain number of bytes, as {@code ip link set DEV mtu N} takes it (no size suffix: 9k
     * would be 9216, not the 9000 of jumbo frames).
     */
    static final class MtuBytes implements CommandLine.ITypeConverter<Integer>
    {
        @Override
        public Integer convert(final String value)
        {
            if (!value.strip().matches("-?[0-9]+"))
            {
                throw new CommandLine.TypeConversionException("'" + value + "': an MTU is a plain number of bytes "
                    + "without size suffix (ip link set DEV mtu N); give the MTU in bytes, e.g. 9000");
            }
            try
            {
                return Integer.valueOf(value.strip());
            }
            catch (final NumberFormatException e)
            {
                throw new CommandLine.TypeConversionException("'" + value + "': an MTU of " + value.strip()
                    + " bytes is outside 68..65535 (ETH_MIN_MTU..ETH_MAX_MTU, dev_set_mtu); give 1500, or 9000 for "
                    + "jumbo frames");
            }
        }
    }

    @Option(names = "--ipv4", paramLabel = "A.B.C.D", description = "An IPv4 address of that netdev: a RoCE port's "
        + "GID table lists it as ::ffff:A.B.C.D (one entry per RoCE type) after the link-local GIDs.")
    private String ipv4;

    @Option(names = "--strict", description = "Report on stderr every failed completion with its diagnosis, DMA "
        + "into memory no longer mapped, and MRs leaked at exit, with the C call sites of the verbs involved.")
    private boolean strict;

    @Option(names = "--trace", paramLabel = "FILE",
        description = "Write the fabric's timeline as a Chrome trace (only on the run that starts the fabric).")
    private Path trace;

    @Parameters(arity = "1..*", paramLabel = "PROGRAM", description = "The program and its arguments: everything "
        + "from the program on is its own ('--' before it is allowed).")
    private List<String> command;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter err = spec.commandLine().getErr();
        if (profile != null && devinfo != null)
        {
            err.println("give --profile or --devinfo, not both");
            return Rnicsim.MALFORMED;
        }
        final TraceOption traceOption = new TraceOption(trace);
        final String traceProblem = traceOption.problem();
        if (traceProblem != null)
        {
            err.println(traceProblem);
            return Rnicsim.MALFORMED;
        }
        final FabricServer.DeviceSpec device;
        final String devices;
        if (devinfo != null)
        {
            final String problem = Problems.unreadable("--devinfo", devinfo);
            if (problem != null)
            {
                err.println((devinfo.toString().isEmpty() ? "" : "--devinfo " + devinfo + ": ") + problem);
                return Rnicsim.MALFORMED;
            }
            try
            {
                final DevinfoResult r = DevinfoReader.read(devinfo);
                r.warnings().forEach(w -> err.println("rnicsim exec: " + w)); // each names the dump already
                device = new FabricServer.DeviceSpec(r.hcaId() == null ? hcaIdOf(r.profile()) : r.hcaId(),
                    r.profile());
                if (!r.defaultedFields().isEmpty())
                {
                    err.println("rnicsim exec: " + ExecMessages.defaulted(devinfo, r));
                }
            }
            catch (final IOException | IllegalArgumentException e)
            {
                err.println("--devinfo " + (e instanceof IOException io ? devinfo + ": " + Problems.reason(io)
                    : DumpFormat.explain(devinfo, e.getMessage())));
                return Rnicsim.MALFORMED;
            }
            devices = "the dump " + devinfo.toAbsolutePath().normalize() + " (device " + device.hcaId() + ")";
        }
        else
        {
            final String name = profile == null ? "connectx5" : profile;
            if (!DeviceProfiles.builtIn().containsKey(name))
            {
                err.println(UnknownName.profile(name));
                return Rnicsim.MALFORMED;
            }
            final DeviceProfile p = DeviceProfiles.byName(name);
            device = new FabricServer.DeviceSpec(hcaIdOf(p), p);
            devices = "profile " + name + " (device " + device.hcaId() + ")";
        }
        final String offEthernet = dev.rnicsim.simnic.PortNetdev.refusalOffEthernet(device.profile(),
            netdevMtu != null ? "--netdev-mtu " + netdevMtu : "--ipv4 " + ipv4);
        if ((netdevMtu != null || ipv4 != null) && offEthernet != null)
        {
            err.println(offEthernet);
            return Rnicsim.MALFORMED;
        }
        final dev.rnicsim.simnic.PortNetdev netdev = new dev.rnicsim.simnic.PortNetdev();
        String option = "--netdev-mtu " + netdevMtu;
        try
        {
            if (netdevMtu != null)
            {
                netdev.mtuBytes(netdevMtu);
            }
            option = "--ipv4 " + ipv4;
            netdev.ipv4(ipv4);
        }
        catch (final dev.rnicsim.verbs.VerbsException e)
        {
            final String m = e.getMessage();
            err.println(option + ": " + m.substring(m.indexOf("EINVAL: ") < 0 ? 0 : m.indexOf("EINVAL: ") + 8));
            return Rnicsim.MALFORMED;
        }
        final FabricServer.DeviceSpec onNetdev = new FabricServer.DeviceSpec(device.hcaId(), device.profile(),
            netdevMtu != null ? netdev.mtuBytes() : device.profile().netdevMtuBytes(), ipv4);
        final String onDevices = devices + (netdevMtu == null ? "" : ", netdev MTU " + netdevMtu)
            + (ipv4 == null ? "" : ", IPv4 " + ipv4);
        final String fabricName = fabric == null ? "exec-" + ProcessHandle.current().pid() : fabric;
        if (!fabricName.matches("[A-Za-z0-9._-]{1,64}"))
        {
            err.println("--fabric '" + fabricName + "': use 1 to 64 letters, digits, '.', '_' or '-'");
            return Rnicsim.MALFORMED;
        }
        final String traceFile = trace == null ? null : trace.toAbsolutePath().normalize().toString();
        final boolean devicesChosen = profile != null || devinfo != null || netdevMtu != null || ipv4 != null;
        final PrintStream log = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        final ProgramRunner.Result r;
        try
        {
            r = ProgramRunner.run(new ProgramRunner.Options(List.of(onNetdev), fabricName, fabric == null, strict,
                new FabricOrigin(0, onDevices, traceFile),
                running -> ExecMessages.joinRefusal(fabricName, running, devicesChosen ? onDevices : null, traceFile),
                true), command, log, server -> traceOption.attach(server.fabric()));
        }
        catch (final ProgramLookup.NotRunnable e)
        {
            err.println("rnicsim exec: " + e.getMessage());
            return e.exitStatus();
        }
        catch (final IOException e)
        {
            err.println("rnicsim exec: " + e.getMessage());
            return Rnicsim.MALFORMED;
        }
        if (r.hostedFabric() != null && !traceOption.write(err))
        {
            return Rnicsim.MALFORMED;
        }
        final String ended = ExecMessages.ended(command.get(0), r);
        if (ended != null)
        {
            err.println("rnicsim exec: " + ended);
        }
        return r.signal() != 0 ? 128 + r.signal() : r.exitCode();
    }

    /**
     * The name a device of this driver gets from its kernel driver, the driver's prefix and 0 ({@link
     * dev.rnicsim.simnic.DriverTraits#hcaIdPrefix()}): mlx5_0, mlx4_0, rxe0, irdma0, bnxt_re0, qedr0, siw0, and with
     * an underscore efa_0 (efa_main.c registers "efa_%d", as the efa dump's hca_id), hns_0, erdma_0, mana_0, cxgb4_0
     * and hfi1_0.
     */
    static String hcaIdOf(final DeviceProfile p)
    {
        return p.traits().hcaIdPrefix() + "0";
    }
}
