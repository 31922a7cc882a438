package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttAllocatorKind;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimGpu;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Plans a workload: measures what one MR of each group costs on the simulated registration path (pinning on an
 * aged host, page-size choice, MTT allocation with its rounding, MPT; {@link GroupMeasure}), then scales the figures
 * to the group's count and checks every limit ({@link Limits}), naming the first to break and the MR at which it
 * breaks. Groups are registered in order. Stateless; each call builds its own simulated fabric.
 */
public final class Planner
{
    /** MRs registered per group to measure it. */
    public static final int SAMPLE_MRS = 3;
    /** Largest region registered whole to measure it: larger ones are measured on a slice of this size. */
    public static final long SAMPLE_REGION_BYTES = 1L << 30;

    /** Largest region {@code --exact} registers whole: 1 TiB (with a hugetlb worst case, twice that is mapped). */
    public static final long EXACT_MAX_REGION_BYTES = 1L << 40;

    /**
     * Most regions {@code --exact} registers in one plan: 2^24, the simulator's MPT index space (no device holds more
     * MRs at once, and each region costs a registration and a deregistration of real time).
     */
    public static final long EXACT_MAX_REGIONS = 1L << 24;

    /** Most bytes {@code --exact} registers in one plan: 16 TiB (about a quarter of an hour of CPU at 1 TiB a minute). */
    public static final long EXACT_MAX_TOTAL_BYTES = 1L << 44;

    /** Most MRs whose MTT reservations are replayed one by one on the device's allocator; beyond, arithmetic. */
    public static final long REPLAY_MRS = 1L << 22;

    /** Which MTT figure of a hugetlb group the verdict uses. */
    public enum Contiguity
    {
        /** Physically contiguous huge pages, merged by drivers that merge (mlx5) into larger MR pages. */
        BEST,
        /** No two huge pages physically adjacent: one MTT entry per huge page (a host whose pool has aged). */
        WORST;

        /**
         * @return the word used on the command line and in the output.
         */
        public String word()
        {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The host the workload runs on.
     *
     * @param ramBytes      physical memory in bytes.
     * @param memlockBytes  RLIMIT_MEMLOCK in bytes ({@link UserProcess#RLIM_INFINITY} for unlimited).
     * @param capIpcLock    true when the process holds CAP_IPC_LOCK.
     * @param hugepages2M   2 MiB pages reserved.
     * @param hugepages1G   1 GiB pages reserved.
     * @param maxMapCount   {@code vm.max_map_count}.
     * @param processes     processes on the host, each running the whole workload on the one device, at least 1.
     * @param gpuVramBytes  memory of the GPU each process uses for its {@code gpu} groups, in bytes.
     * @param gpuBar1Bytes  that GPU's BAR1 aperture, in bytes.
     * @param forkSafe      libibverbs fork support on (RDMAV_FORK_SAFE, ibv_fork_init): every MR is madvised
     *                      MADV_DONTFORK, which splits the mapping it is carved from (memory.c
     *                      {@code ibv_madvise_range}), so each MR counts two mappings against {@code vm.max_map_count}.
     */
    public record HostSpec(long ramBytes, long memlockBytes, boolean capIpcLock, long hugepages2M, long hugepages1G,
        int maxMapCount, int processes, long gpuVramBytes, long gpuBar1Bytes, boolean forkSafe)
    {
        /**
         * Without fork support.
         *
         * @param ramBytes     physical memory in bytes.
         * @param memlockBytes RLIMIT_MEMLOCK in bytes.
         * @param capIpcLock   CAP_IPC_LOCK.
         * @param hugepages2M  2 MiB pages reserved.
         * @param hugepages1G  1 GiB pages reserved.
         * @param maxMapCount  {@code vm.max_map_count}.
         * @param processes    processes.
         * @param gpuVramBytes memory of the GPU each process uses, in bytes.
         * @param gpuBar1Bytes that GPU's BAR1 aperture, in bytes.
         */
        public HostSpec(final long ramBytes, final long memlockBytes, final boolean capIpcLock,
            final long hugepages2M, final long hugepages1G, final int maxMapCount, final int processes,
            final long gpuVramBytes, final long gpuBar1Bytes)
        {
            this(ramBytes, memlockBytes, capIpcLock, hugepages2M, hugepages1G, maxMapCount, processes, gpuVramBytes,
                gpuBar1Bytes, false);
        }

        /**
         * With the default GPU (16 GiB of VRAM, a 256 MiB BAR1).
         *
         * @param ramBytes     physical memory in bytes.
         * @param memlockBytes RLIMIT_MEMLOCK in bytes.
         * @param capIpcLock   CAP_IPC_LOCK.
         * @param hugepages2M  2 MiB pages reserved.
         * @param hugepages1G  1 GiB pages reserved.
         * @param maxMapCount  {@code vm.max_map_count}.
         * @param processes    processes.
         * @param forkSafe     libibverbs fork support on.
         */
        public HostSpec(final long ramBytes, final long memlockBytes, final boolean capIpcLock,
            final long hugepages2M, final long hugepages1G, final int maxMapCount, final int processes,
            final boolean forkSafe)
        {
            this(ramBytes, memlockBytes, capIpcLock, hugepages2M, hugepages1G, maxMapCount, processes,
                DEFAULT_GPU_VRAM_BYTES, SimGpu.DEFAULT_BAR1_BYTES, forkSafe);
        }

        /**
         * @return mappings one MR costs against {@code vm.max_map_count}: 1, or 2 with fork support (the
         * MADV_DONTFORK range and the plain remainder it splits off).
         */
        public long mappingsPerMr()
        {
            return forkSafe ? 2 : 1;
        }

        /** GPU memory of a host spec that does not say: 16 GiB, as a script's {@code gpu}. */
        public static final long DEFAULT_GPU_VRAM_BYTES = 16L << 30;

        /**
         * Processes with the default GPU (16 GiB of VRAM, a 256 MiB BAR1).
         *
         * @param ramBytes     physical memory in bytes.
         * @param memlockBytes RLIMIT_MEMLOCK in bytes.
         * @param capIpcLock   CAP_IPC_LOCK.
         * @param hugepages2M  2 MiB pages reserved.
         * @param hugepages1G  1 GiB pages reserved.
         * @param maxMapCount  {@code vm.max_map_count}.
         * @param processes    processes.
         */
        public HostSpec(final long ramBytes, final long memlockBytes, final boolean capIpcLock,
            final long hugepages2M, final long hugepages1G, final int maxMapCount, final int processes)
        {
            this(ramBytes, memlockBytes, capIpcLock, hugepages2M, hugepages1G, maxMapCount, processes,
                DEFAULT_GPU_VRAM_BYTES, SimGpu.DEFAULT_BAR1_BYTES);
        }

        /**
         * One process.
         *
         * @param ramBytes     physical memory in bytes.
         * @param memlockBytes RLIMIT_MEMLOCK in bytes.
         * @param capIpcLock   CAP_IPC_LOCK.
         * @param hugepages2M  2 MiB pages reserved.
         * @param hugepages1G  1 GiB pages reserved.
         * @param maxMapCount  {@code vm.max_map_count}.
         */
        public HostSpec(final long ramBytes, final long memlockBytes, final boolean capIpcLock,
            final long hugepages2M, final long hugepages1G, final int maxMapCount)
        {
            this(ramBytes, memlockBytes, capIpcLock, hugepages2M, hugepages1G, maxMapCount, 1);
        }

        /**
         * @param settings advised settings.
         * @return this host with the settings that concern it applied.
         */
        HostSpec with(final List<Plan.Setting> settings)
        {
            HostSpec h = this;
            for (final Plan.Setting s : settings)
            {
                h = switch (s.name())
                {
                    case Advice.NR_HUGEPAGES -> new HostSpec(h.ramBytes, h.memlockBytes, h.capIpcLock, s.value(),
                        h.hugepages1G, h.maxMapCount, h.processes, h.gpuVramBytes, h.gpuBar1Bytes, h.forkSafe);
                    case Advice.HUGEPAGES_1G -> new HostSpec(h.ramBytes, h.memlockBytes, h.capIpcLock, h.hugepages2M,
                        s.value(), h.maxMapCount, h.processes, h.gpuVramBytes, h.gpuBar1Bytes, h.forkSafe);
                    case Advice.MEMLOCK -> new HostSpec(h.ramBytes, s.value(), h.capIpcLock, h.hugepages2M,
                        h.hugepages1G, h.maxMapCount, h.processes, h.gpuVramBytes, h.gpuBar1Bytes, h.forkSafe);
                    case Advice.MAX_MAP_COUNT -> new HostSpec(h.ramBytes, h.memlockBytes, h.capIpcLock,
                        h.hugepages2M, h.hugepages1G, (int)Math.min(Integer.MAX_VALUE, s.value()), h.processes,
                        h.gpuVramBytes, h.gpuBar1Bytes, h.forkSafe);
                    default -> h;
                };
            }
            return h;
        }
    }

    private Planner()
    {
    }

    /**
     * Plans a workload with the verdict on the worst huge-page contiguity.
     *
     * @param profile  the device.
     * @param host     the host.
     * @param workload the registrations of one process.
     * @return the plan.
     * @throws IllegalArgumentException when the totals do not fit in 64 bits.
     */
    public static Plan plan(final DeviceProfile profile, final HostSpec host, final Workload workload)
    {
        return plan(profile, host, workload, Contiguity.WORST);
    }

    /**
     * Plans a workload. Per process (the limits the kernel keeps per process): RLIMIT_MEMLOCK and
     * {@code vm.max_map_count}, counted as one mapping per region (an upper bound: regions carved from one
     * allocation share a mapping), and the GPU's BAR1 and memory (each process uses its own GPU). Per device (all
     * processes share it): max_mr and the MTT, whose reservations are replayed MR by MR on the device's allocator (so
     * mlx4's buddy rounding and fragmentation between groups of different sizes count) for up to
     * {@link #REPLAY_MRS} MRs. Per host: RAM and the hugetlb pools. The advice is checked by planning again with
     * every setting it gives applied; whatever still breaks is said to be beyond any setting.
     *
     * @param profile    the device.
     * @param host       the host.
     * @param workload   the registrations of one process.
     * @param contiguity which MTT figure of hugetlb groups the verdict uses.
     * @return the plan.
     * @throws IllegalArgumentException when the totals do not fit in 64 bits.
     */
    public static Plan plan(final DeviceProfile profile, final HostSpec host, final Workload workload,
        final Contiguity contiguity)
    {
        return plan(profile, host, workload, contiguity, false);
    }

    /**
     * Refuses an exact plan of more than {@link #EXACT_MAX_REGIONS} regions or {@link #EXACT_MAX_TOTAL_BYTES} bytes in
     * all, which would run for hours (a count of 10^12 regions of 4 KiB is a valid workload to plan sampled).
     */
    private static void exactTotals(final Workload workload)
    {
        long regions = 0;
        long bytes = 0;
        for (final Workload.Group g : workload.groups())
        {
            regions = Math.min(Long.MAX_VALUE / 2, regions + g.count());
            bytes = g.count() > (Long.MAX_VALUE / 2 - bytes) / Math.max(1, g.sizeBytes()) ? Long.MAX_VALUE / 2
                : bytes + g.count() * g.sizeBytes();
        }
        if (regions > EXACT_MAX_REGIONS || bytes > EXACT_MAX_TOTAL_BYTES)
        {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "--exact: the workload has %,d regions of"
                + " %s in all; --exact registers at most %,d regions and %s in one plan (each region is registered and"
                + " deregistered in turn, in real time): plan it without --exact, which samples each group",
                regions, bytes >= Long.MAX_VALUE / 2 ? "more than 4 EiB" : Sizes.iec(bytes), EXACT_MAX_REGIONS,
                Sizes.iec(EXACT_MAX_TOTAL_BYTES)));
        }
    }

    /**
     * Plans a workload as {@link #plan(DeviceProfile, HostSpec, Workload, Contiguity)}, or, with {@code exact},
     * registering every region of every group whole through its registration path (no sampling, no slices): each
     * group's figures are then the largest of any of its MRs, and a note gives the range when they differ.
     *
     * @param profile    the device.
     * @param host       the host.
     * @param workload   the registrations of one process.
     * @param contiguity which MTT figure of hugetlb groups the verdict uses.
     * @param exact      true to register every region instead of a sample.
     * @return the plan.
     * @throws IllegalArgumentException when the totals do not fit in 64 bits, or, with {@code exact}, a region is
     *                                  above {@link #EXACT_MAX_REGION_BYTES} or the workload above
     *                                  {@link #EXACT_MAX_REGIONS} regions or {@link #EXACT_MAX_TOTAL_BYTES}.
     */
    public static Plan plan(final DeviceProfile profile, final HostSpec host, final Workload workload,
        final Contiguity contiguity, final boolean exact)
    {
        if (exact)
        {
            for (final Workload.Group g : workload.groups())
            {
                if (g.sizeBytes() > EXACT_MAX_REGION_BYTES)
                {
                    throw new IllegalArgumentException(String.format(Locale.ROOT, "--exact: group '%s' has regions of"
                        + " %s; --exact registers regions of at most %s whole (a simulated host holds one at a time):"
                        + " plan it without --exact", g.name(), Sizes.iec(g.sizeBytes()),
                        Sizes.iec(EXACT_MAX_REGION_BYTES)));
                }
            }
            exactTotals(workload);
        }
        final List<Plan.GroupResult> groups = new ArrayList<>();
        final Notes notes = new Notes();
        final Map<Shape, Plan.GroupResult> measured = new HashMap<>();
        final DeviceProfile lifted = lifted(profile);
        for (final Workload.Group g : workload.groups())
        {
            final Shape shape = new Shape(g.sizeBytes(), g.backing(), g.access(), g.iovaAlignBytes(),
                Math.min(g.count(), SAMPLE_MRS), g.implicit(), g.gpu());
            final Plan.GroupResult m = exact ? measure(lifted, host, g, contiguity, true, notes)
                : measured.computeIfAbsent(shape, k -> measure(lifted, host, g, contiguity, false, notes));
            groups.add(new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), g.lifetime(),
                m.pageSizeBytes(), m.mttEntriesPerMr(), m.mttReservedPerMr(), m.pinnedBytesPerMr(), m.regNsPerMr(),
                m.deregNsPerMr(), g.requestsPerSecond(), m.sampled(), m.kind(), m.mttEntriesBest(),
                m.mttEntriesWorst(), m.bar1BytesPerMr(), m.gpuBytesPerMr(), m.refusal()));
            if (!exact && g.count() > m.sampled() && m.sampled() > 0)
            {
                notes.add(String.format(Locale.ROOT, "group %s: measured on %d of %,d MRs, scaled to the rest",
                    g.name(), m.sampled(), g.count()));
            }
            if (g.lifetime() == Workload.Lifetime.PER_REQUEST && g.requestsPerSecond() == 0)
            {
                notes.add("group " + g.name() + ": per-request without requestsPerSecond: its cost per second on the "
                    + "request path is not counted");
            }
            kindNotes(g, m, contiguity, exact, notes);
        }
        try
        {
            final Plan first = Limits.total(profile, host, groups, notes, contiguity);
            final List<Plan.Setting> settings = new ArrayList<>();
            final Notes advice = new Notes();
            Advice.advise(profile, host, groups, workload, first, advice, settings);
            // The fixed point: plan again with every setting applied; what still breaks, no setting fixes.
            final Plan again = Limits.total(Advice.apply(profile, settings), host.with(settings), groups,
                new Notes(), contiguity);
            Advice.beyondSettings(profile, host, again, advice);
            return new Plan(first.device(), first.groups(), first.totals(), first.limits(), first.firstLimit(),
                first.breach(), advice.list(), List.copyOf(settings), first.notes(), contiguity.word(),
                CacheVerdict.of(profile, new SimFabric().costModel(), groups, host.processes()));
        }
        catch (final ArithmeticException e)
        {
            final var largest = workload.groups().stream()
                .max(java.util.Comparator.comparingDouble(g -> (double)g.count() * g.sizeBytes())).orElseThrow();
            throw new IllegalArgumentException("the workload's totals do not fit in 64 bits (" + host.processes()
                + (host.processes() == 1 ? " process, " : " processes, ") + groups.size()
                + (groups.size() == 1 ? " group" : " groups") + "; the largest is group '" + largest.name() + "': "
                + String.format(Locale.ROOT, "%,d", largest.count()) + " regions of "
                + String.format(Locale.ROOT, "%,d", largest.sizeBytes()) + " bytes): plan fewer or smaller regions",
                e);
        }
    }

    /** What the notes say of a group's kind: the contiguity used, what ODP and GPU groups pin. */
    private static void kindNotes(final Workload.Group g, final Plan.GroupResult m, final Contiguity contiguity,
        final boolean exact, final Notes notes)
    {
        if (m.refusal() != null)
        {
            return;
        }
        if (m.mttEntriesBest() != m.mttEntriesWorst())
        {
            notes.add(String.format(Locale.ROOT, "group %s: %,d MTT entries per MR with physically contiguous huge "
                + "pages (best), %,d with no two adjacent (worst); the verdict uses the %s case (--contiguity)",
                g.name(), m.mttEntriesBest(), m.mttEntriesWorst(), contiguity.word()));
        }
        else if (exact && (g.backing().equals("2m") || g.backing().equals("1g")))
        {
            // An exact plan registers on this host's own pool: the entries follow where its huge pages lie, which
            // the exact note gives per MR; there is no best or worst case to tell apart.
            notes.add(String.format(Locale.ROOT, "group %s: up to %,d MTT entries per MR as this host's hugetlb pool "
                + "placed the pages (exact registration: --contiguity has no cases to compare)", g.name(),
                m.mttEntriesBest()));
        }
        else if (g.backing().equals("2m") || g.backing().equals("1g"))
        {
            notes.add(String.format(Locale.ROOT, "group %s: %,d MTT entries per MR whether its huge pages are "
                + "contiguous or not", g.name(), m.mttEntriesBest()));
        }
        switch (m.kind())
        {
            case "odp" -> notes.add("group " + g.name() + ": ODP MRs pin nothing and RLIMIT_MEMLOCK is not charged; "
                + "their pages are faulted in on first device access and may be reclaimed, so they count in no RAM "
                + "limit; the MTT entries of the whole range are reserved at registration");
            case "odp-implicit" -> notes.add("group " + g.name() + ": implicit ODP MRs pin nothing; each 1 GiB of "
                + "address space reached gets a child MR of " + String.format(Locale.ROOT, "%,d",
                dev.rnicsim.mtt.AdapterTables.IMPLICIT_CHILD_ENTRIES) + " MTT entries on its first fault (measured "
                + "by prefetching " + Sizes.iec(exact ? g.sizeBytes() : Math.min(g.sizeBytes(), SAMPLE_REGION_BYTES))
                + ")");
            case "peer-memory" -> notes.add("group " + g.name() + ": GPU memory through a peer-memory client "
                + "(nvidia-peermem, assumed loaded): pins GPU pages, maps them through BAR1, no host memory or "
                + "RLIMIT_MEMLOCK; each process uses its own GPU");
            case "dmabuf" -> notes.add("group " + g.name() + ": GPU memory as dma-bufs (ibv_reg_dmabuf_mr): maps "
                + "BAR1, no host memory or RLIMIT_MEMLOCK; each process uses its own GPU");
            default ->
            {
            }
        }
    }

    /** What a measurement depends on: groups of the same shape share one. */
    private record Shape(long sizeBytes, String backing, String access, long iovaAlignBytes, long samples,
        boolean implicit, String gpu)
    {
    }

    /** Notes and advice, capped so that a workload of many groups does not print thousands of lines. */
    static final class Notes
    {
        static final int MAX = 40;
        final List<String> lines = new ArrayList<>();
        int dropped;

        void add(final String line)
        {
            if (lines.size() < MAX)
            {
                lines.add(line);
            }
            else
            {
                dropped++;
            }
        }

        List<String> list()
        {
            if (dropped == 0)
            {
                return List.copyOf(lines);
            }
            final List<String> out = new ArrayList<>(lines);
            out.add(String.format(Locale.ROOT, "... and %,d more like these", dropped));
            return out;
        }
    }

    /**
     * The device the figures of one MR are measured on: the profile with its capacity limits (max_mr, the MTT's
     * size, max_mr_size) lifted and everything else kept (page sizes, allocator rounding, cost), so that a limit the
     * workload passes is found by the limit checks, at the right MR, rather than by the sample.
     */
    private static DeviceProfile lifted(final DeviceProfile profile)
    {
        final MttConfig mtt = profile.mtt().allocator() == MttAllocatorKind.BUDDY
            ? MttConfig.buddy(Math.max(profile.mtt().logNumSegments(), 24), profile.mtt().logMttsPerSeg())
            : MttConfig.exact(1L << MttConfig.MAX_LOG_ENTRIES);
        return profile.withMtt(mtt).withAttributes(profile.attributes().toBuilder()
            .maxMr((int)Math.min(MptConfig.MAX_MR_LIMIT, 1L << (32 - profile.traits().keyVariantBits())))
            .maxMrSizeBytes(-1L).build());
    }

    /** Measures one group: best and worst contiguity for hugetlb groups, once for the others. */
    private static Plan.GroupResult measure(final DeviceProfile profile, final HostSpec host, final Workload.Group g,
        final Contiguity contiguity, final boolean exact, final Notes notes)
    {
        final GroupMeasure.One best = exact ? GroupMeasure.exact(profile, host, g, false)
            : GroupMeasure.measure(profile, host, g, false);
        final boolean hugetlb = g.backing().equals("2m") || g.backing().equals("1g");
        final GroupMeasure.One worst = !hugetlb || best.refusal() != null ? best
            : exact ? GroupMeasure.exact(profile, host, g, true) : GroupMeasure.measure(profile, host, g, true);
        final GroupMeasure.One m = contiguity == Contiguity.BEST ? best : worst;
        if (m.refusal() != null)
        {
            notes.add("group " + g.name() + ": the device refuses its registration: " + m.refusal());
        }
        else if (exact)
        {
            notes.add(String.format(Locale.ROOT, "group %s: exact: all %,d MRs registered whole%s", g.name(),
                g.count(), m.minMttEntries() == m.mttEntries() ? "" : String.format(Locale.ROOT, "; MTT entries "
                + "per MR from %,d to %,d, the largest counted for every MR", m.minMttEntries(), m.mttEntries())));
        }
        else if (g.sizeBytes() > SAMPLE_REGION_BYTES)
        {
            notes.add(String.format(Locale.ROOT, "group %s: one MR of %s measured on a %s slice, scaled x%.0f",
                g.name(), Sizes.iec(g.sizeBytes()), Sizes.iec(SAMPLE_REGION_BYTES),
                (double)g.sizeBytes() / SAMPLE_REGION_BYTES));
        }
        // With fork support every pinned MR costs a MADV_DONTFORK that splits its mapping in two more VMAs, and a
        // MADV_DOFORK that merges them back (libibverbs memory.c ibv_madvise_range; CostModel.forkSafetyNs).
        final long madviseNs = host.forkSafe() && "pinned".equals(m.kind())
            ? dev.rnicsim.simnic.CostModel.defaults().forkSafetyNs(1, 2, 0) : 0;
        return new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), g.lifetime(), m.pageSizeBytes(),
            m.mttEntries(), m.mttReserved(), m.pinnedBytes(), m.regNs() + madviseNs, m.deregNs() + madviseNs,
            g.requestsPerSecond(),
            m.samples(), m.kind(), best.mttEntries(), worst.mttEntries(), m.bar1Bytes(), m.gpuBytes(), m.refusal());
    }









    /** Bytes of the hugetlb pools the host reserves (out of RAM). */
    public static long poolBytes(final HostSpec host)
    {
        return Limits.poolBytes(host);
    }

    static long ceilDiv(final long a, final long b)
    {
        return (a + b - 1) / b;
    }

    static long align(final long v, final long a)
    {
        return (v + a - 1) / a * a;
    }
}
