package dev.rnicsim.scenarios.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.mtt.MttAllocatorKind;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.scenarios.plan.Plan;
import dev.rnicsim.scenarios.plan.Planner;
import dev.rnicsim.scenarios.plan.SmapsWorkload;
import dev.rnicsim.scenarios.plan.Sweep;
import dev.rnicsim.scenarios.plan.Workload;
import dev.rnicsim.scenarios.script.Units;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.simnic.DevinfoWriter;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.VerbsException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code rnicsim plan}: whether a workload's registrations fit a device and a host, and which limit breaks first.
 */
@Command(name = "plan", mixinStandardHelpOptions = true,
    description = "Capacity planning: registers a sample of each group of a workload on the simulated device and "
        + "host, scales it to the workload, and reports MRs, MTT entries, pinned bytes, start-up registration time "
        + "and every limit (max_mr, MTT, max_mr_size, RLIMIT_MEMLOCK, vm.max_map_count, hugetlb pools, RAM), naming "
        + "the first to break.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:planned (whether it fits is in the report)", "2:bad options, or an unreadable or malformed "
        + "workload or dump (file:line and what was expected)", "4:the --device does not exist or cannot be opened "
        + "(the reason is printed)"})
final class PlanCommand implements Callable<Integer>
{
    /** Most processes planned on one host. */
    static final int MAX_PROCESSES = 1 << 20;

    @Option(names = "--profile", paramLabel = "NAME", defaultValue = "connectx5",
        description = "A built-in device profile (default ${DEFAULT-VALUE}).")
    private String profile;

    @Option(names = "--devinfo", paramLabel = "FILE", description = "A real 'ibv_devinfo -v' dump instead.")
    private Path devinfo;

    @Option(names = "--device", paramLabel = "NAME", description = "A device to query instead: rdma:NAME "
        + "(rdma-core), rdma: for the first rdma-core device, or sim:PROFILE; its attributes, with the rest of the "
        + "profile of its driver.")
    private String deviceName;

    @Option(names = "--log-num-mtt", paramLabel = "N", description = "mlx4: log2 of the MTT segments.")
    private Integer logNumMtt;

    @Option(names = "--log-mtts-per-seg", paramLabel = "N", description = "mlx4: log2 of entries per segment.")
    private Integer logMttsPerSeg;

    @Option(names = "--set", paramLabel = "NAME=VALUE",
        description = "Override a device attribute by its ibv_devinfo name (max_mr=100000, page_size_cap=0x1000, "
            + "max_mr_size=0x200000000, ...) or cache_entries / cache_ways; repeatable.")
    private java.util.List<String> overrides = new java.util.ArrayList<>();

    @Option(names = "--processes", paramLabel = "N", defaultValue = "1",
        description = "Processes on the host, each running the whole workload on the one device (default "
            + "${DEFAULT-VALUE}).")
    private int processes;

    @Option(names = "--ram", paramLabel = "SIZE", defaultValue = "16G", description = "Host RAM (default "
        + "${DEFAULT-VALUE}).")
    private String ram;

    @Option(names = "--memlock", paramLabel = "SIZE", defaultValue = "8M",
        description = "RLIMIT_MEMLOCK, or 'unlimited' (default ${DEFAULT-VALUE}).")
    private String memlock;

    @Option(names = "--cap-ipc-lock", description = "The process holds CAP_IPC_LOCK (no memlock limit).")
    private boolean capIpcLock;

    @Option(names = "--hugepages2m", paramLabel = "N", defaultValue = "0", description = "vm.nr_hugepages (2 MiB).")
    private long hugepages2M;

    @Option(names = "--hugepages1g", paramLabel = "N", defaultValue = "0", description = "1 GiB pages reserved.")
    private long hugepages1G;

    @Option(names = "--fork-safe", description = "libibverbs fork support (RDMAV_FORK_SAFE=1): each MR's "
        + "MADV_DONTFORK splits a mapping, 2 per MR against vm.max_map_count.")
    private boolean forkSafe;

    @Option(names = "--max-map-count", paramLabel = "N", defaultValue = "65530", description = "vm.max_map_count.")
    private int maxMapCount;

    @Option(names = "--workload", paramLabel = "FILE",
        description = "The workload, JSON or YAML (.yaml/.yml): groups of name, count, size, backing "
            + "(4k|thp|2m|1g|gpu), access (odp for ODP MRs), implicit, gpu (peer-memory|dmabuf), iovaAlign, lifetime "
            + "(static|per-request|cached), requestsPerSecond. This or --smaps.")
    private Path workloadFile;

    @Option(names = "--smaps", paramLabel = "FILE",
        description = "A /proc/PID/smaps: one group per writable anonymous or hugetlb mapping. This or --workload.")
    private Path smapsFile;

    @Option(names = "--smaps-filter", paramLabel = "REGEX",
        description = "With --smaps: only mappings whose name (e.g. [heap], [anon:x], empty) the regex finds.")
    private String smapsFilter;

    @Option(names = "--sweep", paramLabel = "size|count",
        description = "Plan the workload's single group at sizes or counts doubling from --from to --to, with 4k, 2m "
            + "and 1g backing where the page fits, and chart MTT entries and pinned memory to --svg.")
    private String sweep;

    @Option(names = "--from", paramLabel = "N", description = "With --sweep: the first size or count.")
    private String fromText;

    @Option(names = "--to", paramLabel = "N", description = "With --sweep: the last size or count.")
    private String toText;

    @Option(names = "--svg", paramLabel = "FILE", description = "With --sweep: the chart to write.")
    private Path svg;

    @Option(names = "--cpu-pages", description = "With --sweep: force the MR page to each backing's CPU page "
        + "(page_size_cap cleared above it), as a driver that does not merge contiguous pages.")
    private boolean cpuPages;

    @Option(names = "--json", description = "Print the plan (or the sweep) as JSON.")
    private boolean json;

    @Option(names = "--contiguity", paramLabel = "best|worst", defaultValue = "worst",
        description = "Which MTT figure of hugetlb groups the verdict uses: physically contiguous huge pages (best) "
            + "or no two adjacent (worst, the default).")
    private String contiguity;

    @Option(names = "--gpu-memory", paramLabel = "SIZE", defaultValue = "16G",
        description = "Memory of the GPU each process registers its gpu groups on (default ${DEFAULT-VALUE}).")
    private String gpuMemory;

    @Option(names = "--gpu-bar1", paramLabel = "SIZE", defaultValue = "256M",
        description = "BAR1 aperture of that GPU, which GPU MRs map (default ${DEFAULT-VALUE}).")
    private String gpuBar1;

    @Option(names = "--exact", description = "Register every region of every group whole through its registration "
        + "path instead of a sample scaled (slower; one region is held at a time).")
    private boolean exact;

    /** The device's source, for --json. */
    private PlanReport.DeviceSource deviceSource;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter err = spec.commandLine().getErr();
        final DeviceProfile device;
        try
        {
            device = device();
        }
        catch (final IllegalArgumentException | IOException e)
        {
            err.println(e instanceof IOException io ? devinfo + ": " + Problems.reason(io) : e.getMessage());
            return Rnicsim.MALFORMED;
        }
        catch (final VerbsException e)
        {
            err.println("rnicsim: " + e.getMessage());
            return DevinfoCommand.NO_DEVICE;
        }
        final Long ramBytes = Units.parseSize(ram);
        final Long memlockBytes = memlock.equals("unlimited") ? Long.valueOf(UserProcess.RLIM_INFINITY)
            : Units.parseSize(memlock);
        if (ramBytes == null || ramBytes < HostConfig.MIN_PHYSICAL_MEMORY_BYTES
            || ramBytes > HostConfig.MAX_PHYSICAL_MEMORY_BYTES)
        {
            err.println("--ram " + ram + ": expected a size from 64M to 4T");
            return Rnicsim.MALFORMED;
        }
        if (memlockBytes == null || memlockBytes < 0 && memlockBytes != UserProcess.RLIM_INFINITY)
        {
            err.println("--memlock " + memlock + ": expected a size such as 64K or 8G, or 'unlimited'");
            return Rnicsim.MALFORMED;
        }
        // kernel/sysctl.c (mm/mmap.c on newer kernels): vm.max_map_count takes 0 and up (extra1 = SYSCTL_ZERO)
        if (maxMapCount < 0)
        {
            err.println("--max-map-count " + maxMapCount + ": expected 0 or more (vm.max_map_count's minimum is 0)");
            return Rnicsim.MALFORMED;
        }
        if (hugepages2M < 0 || hugepages1G < 0 || hugepages2M > ramBytes / (2L << 20)
            || hugepages1G > ramBytes / (1L << 30)
            || hugepages2M * (2L << 20) + hugepages1G * (1L << 30) > ramBytes)
        {
            err.println("--hugepages2m " + hugepages2M + " --hugepages1g " + hugepages1G + ": expected pools of 0 "
                + "or more pages that fit in --ram " + ram + " together");
            return Rnicsim.MALFORMED;
        }
        if (processes < 1 || processes > MAX_PROCESSES)
        {
            err.println("--processes " + processes + ": expected 1 to " + MAX_PROCESSES);
            return Rnicsim.MALFORMED;
        }
        final Workload workload;
        try
        {
            workload = workload();
        }
        catch (final IllegalArgumentException e)
        {
            err.println(e.getMessage());
            return Rnicsim.MALFORMED;
        }
        final Long gpuMemoryBytes = Units.parseSize(gpuMemory);
        final Long gpuBar1Bytes = Units.parseSize(gpuBar1);
        if (gpuMemoryBytes == null || gpuMemoryBytes < 1 || gpuMemoryBytes > dev.rnicsim.simnic.SimGpu.MAX_VRAM_BYTES
            || gpuBar1Bytes == null || gpuBar1Bytes < 1)
        {
            err.println("--gpu-memory " + gpuMemory + " --gpu-bar1 " + gpuBar1 + ": expected sizes such as 80G and "
                + "256M (GPU memory at most 1T)");
            return Rnicsim.MALFORMED;
        }
        final Planner.Contiguity contiguityCase = switch (contiguity)
        {
            case "best" -> Planner.Contiguity.BEST;
            case "worst" -> Planner.Contiguity.WORST;
            default -> null;
        };
        if (contiguityCase == null)
        {
            err.println("--contiguity " + contiguity + ": expected best or worst");
            return Rnicsim.MALFORMED;
        }
        final Planner.HostSpec host = new Planner.HostSpec(ramBytes, memlockBytes, capIpcLock, hugepages2M,
            hugepages1G, maxMapCount, processes, gpuMemoryBytes, gpuBar1Bytes, forkSafe);
        if (sweep != null && (exact || spec.commandLine().getParseResult().hasMatchedOption("--contiguity")))
        {
            err.println("--exact and --contiguity do not go with --sweep: a sweep plans contiguous huge pages (the best"
                + " case); --cpu-pages gives one MR page per CPU page");
            return Rnicsim.MALFORMED;
        }
        if (sweep != null)
        {
            return sweep(device, host, workload);
        }
        if (fromText != null || toText != null || svg != null || cpuPages)
        {
            err.println("--from, --to, --svg and --cpu-pages go with --sweep");
            return Rnicsim.MALFORMED;
        }
        final Plan plan;
        try
        {
            plan = Planner.plan(device, host, workload, contiguityCase, exact);
        }
        catch (final IllegalArgumentException e)
        {
            err.println(e.getMessage());
            return Rnicsim.MALFORMED;
        }
        if (json)
        {
            spec.commandLine().getOut().println(new ObjectMapper().writerWithDefaultPrettyPrinter()
                .writeValueAsString(PlanReport.json(plan, host, workload, deviceSource)));
        }
        else
        {
            PlanReport.text(plan, spec.commandLine().getOut());
        }
        return Rnicsim.OK;
    }

    /** Reads --workload or --smaps; IllegalArgumentException with the message to print. */
    private Workload workload()
    {
        if ((workloadFile == null) == (smapsFile == null))
        {
            throw new IllegalArgumentException("expected exactly one of --workload FILE and --smaps FILE");
        }
        if (smapsFilter != null && smapsFile == null)
        {
            throw new IllegalArgumentException("--smaps-filter goes with --smaps");
        }
        final Path file = workloadFile != null ? workloadFile : smapsFile;
        final String text;
        try
        {
            final String problem = Problems.unreadable(workloadFile != null ? "--workload" : "--smaps", file);
            if (problem != null && file.toString().isEmpty())
            {
                throw new IllegalArgumentException(problem);
            }
            if (!Files.exists(file))
            {
                throw new IllegalArgumentException(file + ": no such file");
            }
            if (problem != null)
            {
                throw new IllegalArgumentException(file + ": " + problem);
            }
            text = Files.readString(file, StandardCharsets.UTF_8);
        }
        catch (final IOException e)
        {
            throw new IllegalArgumentException(file + ": " + Problems.reason(e), e);
        }
        if (workloadFile != null)
        {
            return Workload.parse(workloadFile.toString(), text);
        }
        final Pattern filter;
        try
        {
            filter = smapsFilter == null ? null : Pattern.compile(smapsFilter);
        }
        catch (final PatternSyntaxException e)
        {
            throw new IllegalArgumentException("--smaps-filter " + smapsFilter + ": not a regular expression: "
                + e.getDescription(), e);
        }
        return SmapsWorkload.parse(smapsFile.toString(), text, filter);
    }

    /** --sweep: plans the single group along the range, prints a table and writes the chart. */
    private int sweep(final DeviceProfile device, final Planner.HostSpec host, final Workload workload)
        throws IOException
    {
        final PrintWriter err = spec.commandLine().getErr();
        final Sweep.Kind kind = switch (sweep)
        {
            case "size" -> Sweep.Kind.SIZE;
            case "count" -> Sweep.Kind.COUNT;
            default -> null;
        };
        if (kind == null || svg == null || fromText == null || toText == null)
        {
            err.println("--sweep expects 'size' or 'count' with --from N --to N --svg FILE");
            return Rnicsim.MALFORMED;
        }
        final String svgOverInput = java.util.stream.Stream.of(
            OutputFile.overInput("--svg", svg, "--workload", workloadFile),
            OutputFile.overInput("--svg", svg, "--smaps", smapsFile),
            OutputFile.overInput("--svg", svg, "--devinfo", devinfo)).filter(java.util.Objects::nonNull).findFirst()
            .orElse(OutputFile.problem("--svg", svg));
        if (svgOverInput != null)
        {
            err.println(svgOverInput);
            return Rnicsim.MALFORMED;
        }
        if (workload.groups().size() != 1)
        {
            err.println("--sweep expects a workload of one group, found " + workload.groups().size()
                + (smapsFile != null ? " (narrow --smaps with --smaps-filter)" : ""));
            return Rnicsim.MALFORMED;
        }
        final Long fromValue = Units.parse(fromText);
        final Long toValue = Units.parse(toText);
        if (fromValue == null || toValue == null)
        {
            final String bad = fromValue == null ? "--from " + fromText : "--to " + toText;
            final String tooLarge = Units.tooLarge(fromValue == null ? fromText : toText);
            err.println(bad + ": " + (tooLarge != null ? tooLarge : "expected a size such as 4K or 1G (units K, M, G "
                + "and T; at most 8388607T, 2^63 - 1 bytes, fits in 64 bits), or a count"));
            return Rnicsim.MALFORMED;
        }
        final Sweep result;
        try
        {
            result = Sweep.run(device, host, workload.groups().get(0), kind, fromValue, toValue, cpuPages);
        }
        catch (final IllegalArgumentException e)
        {
            err.println(e.getMessage());
            return Rnicsim.MALFORMED;
        }
        try
        {
            result.writeSvg(svg);
        }
        catch (final IOException e)
        {
            err.println(OutputFile.failed("--svg", svg, e));
            return Rnicsim.MALFORMED;
        }
        final PrintWriter out = spec.commandLine().getOut();
        if (json)
        {
            final ObjectMapper m = new ObjectMapper();
            final ObjectNode root = m.createObjectNode();
            root.set("device", PlanReport.device(deviceSource));
            root.put("sweep", sweep);
            root.put("cpuPages", cpuPages);
            root.set("group", m.valueToTree(workload.groups().get(0)));
            root.put("chart", svg.toString());
            final ArrayNode rows = root.putArray("rows");
            for (final Sweep.Row r : result.rows())
            {
                final Plan.GroupResult g = r.plan().groups().get(0);
                final ObjectNode row = rows.addObject().put("value", r.value()).put("backing", r.backing())
                    .put("pageSizeBytes", g.pageSizeBytes()).put("mttEntries", r.mttEntriesWritten())
                    .put("mttEntriesReserved", r.plan().totals().mttEntries())
                    .put("pinnedBytes", r.plan().totals().pinnedBytes())
                    .put("registrationTimeNs", r.plan().totals().registrationTimeNs());
                row.set("firstLimit", PlanReport.firstLimit(r.plan().breach()));
            }
            out.println(m.writerWithDefaultPrettyPrinter().writeValueAsString(root));
            return Rnicsim.OK;
        }
        out.println("device " + result.device() + ", sweep of " + sweep + " for group '"
            + workload.groups().get(0).name() + "'" + (cpuPages ? ", MR page forced to the CPU page" : ""));
        out.printf("%14s %8s %12s %14s %14s %12s%n", kind == Sweep.Kind.SIZE ? "size" : "count", "backing",
            "page size", "MTT entries", "MTT reserved", "pinned");
        for (final Sweep.Row r : result.rows())
        {
            out.printf(Locale.ROOT, "%14s %8s %12s %,14d %,14d %12s%n", kind == Sweep.Kind.SIZE
                ? Units.bytes(r.value()) : String.format(Locale.ROOT, "%,d", r.value()), r.backing(),
                Units.bytes(r.plan().groups().get(0).pageSizeBytes()), r.mttEntriesWritten(),
                r.plan().totals().mttEntries(), Units.bytes(r.plan().totals().pinnedBytes()));
        }
        out.println("chart: " + svg);
        return Rnicsim.OK;
    }

    private DeviceProfile device() throws IOException
    {
        DeviceProfile p;
        final String[] source;
        if (devinfo != null && spec.commandLine().getParseResult().hasMatchedOption("--profile"))
        {
            throw new IllegalArgumentException("--profile and --devinfo: give one device, not both");
        }
        if (deviceName != null && (devinfo != null
            || spec.commandLine().getParseResult().hasMatchedOption("--profile")))
        {
            throw new IllegalArgumentException("--device with --profile or --devinfo: give one device");
        }
        if (deviceName != null)
        {
            // The device's attributes as ibv_devinfo would print them, read back as a dump of that device.
            final Device d = DevinfoCommand.resolve(deviceName);
            final DeviceAttributes a;
            try (Context ctx = d.open())
            {
                a = ctx.queryDevice();
            }
            p = DevinfoReader.parse(DevinfoWriter.write(DevinfoCommand.hcaId(d), a), d.name()).profile();
            source = new String[] {"device " + deviceName, "device"};
        }
        else if (devinfo != null)
        {
            final String problem = Problems.unreadable("--devinfo", devinfo);
            if (problem != null && devinfo.toString().isEmpty())
            {
                throw new IllegalArgumentException(problem);
            }
            if (problem != null)
            {
                throw new IllegalArgumentException(devinfo + ": " + problem);
            }
            final dev.rnicsim.simnic.DevinfoResult read;
            try
            {
                read = DevinfoReader.read(devinfo);
            }
            catch (final IllegalArgumentException e)
            {
                throw new IllegalArgumentException(DumpFormat.explain(devinfo, e.getMessage()), e);
            }
            for (final String w : read.warnings())
            {
                spec.commandLine().getErr().println("rnicsim plan: warning: " + w);
            }
            p = read.profile();
            source = new String[] {"dump " + devinfo, "dump"};
        }
        else
        {
            if (!DeviceProfiles.builtIn().containsKey(profile))
            {
                throw new IllegalArgumentException("--profile " + profile + ": " + UnknownName.profile(profile));
            }
            p = DeviceProfiles.byName(profile);
            source = new String[] {"profile " + profile, "profile"};
        }
        if ((logNumMtt != null || logMttsPerSeg != null) && p.mtt().allocator() != MttAllocatorKind.BUDDY)
        {
            throw new IllegalArgumentException("--log-num-mtt and --log-mtts-per-seg are mlx4 module parameters: "
                + p.name() + " is " + p.driver() + ", whose MTT they do not size");
        }
        if (logNumMtt != null || logMttsPerSeg != null)
        {
            try
            {
                p = p.withMtt(MttConfig.buddy(logNumMtt == null ? 20 : logNumMtt, logMttsPerSeg == null ? 3
                    : logMttsPerSeg));
            }
            catch (final RuntimeException e)
            {
                throw new IllegalArgumentException("--log-num-mtt / --log-mtts-per-seg: " + e.getMessage(), e);
            }
        }
        if (!overrides.isEmpty())
        {
            try
            {
                p = DevinfoReader.withOverrides(p, overrides);
            }
            catch (final IllegalArgumentException e)
            {
                throw new IllegalArgumentException("--set " + e.getMessage(), e);
            }
        }
        final java.util.Set<String> setNames = new java.util.HashSet<>();
        overrides.forEach(o -> setNames.add(o.split("=", 2)[0].strip()));
        deviceSource = new PlanReport.DeviceSource(p, source[0], source[1], setNames, logNumMtt != null
            || logMttsPerSeg != null);
        return p;
    }
}
