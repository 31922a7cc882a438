package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.MptConfig;
import dev.rnicsim.mtt.MttAllocatorKind;
import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.mtt.MttOccupancy;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.scenarios.script.Spec;
import dev.rnicsim.scenarios.script.Units;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Set;

/**
 * Plans a workload: measures what one MR of each group costs on the simulated registration path (pinning on an
 * aged host, page-size choice, MTT allocation with its rounding, MPT), then scales the figures to the group's
 * count and checks every limit, naming the first to break and the MR at which it breaks. Groups are registered
 * in order. Stateless; each call builds its own simulated fabric.
 */
public final class Planner
{
    /** MRs registered per group to measure it. */
    public static final int SAMPLE_MRS = 3;
    /** Largest region registered whole to measure it: larger ones are measured on a slice of this size. */
    public static final long SAMPLE_REGION_BYTES = 1L << 30;

    /** Most MRs whose MTT reservations are replayed one by one on the device's allocator; beyond, arithmetic. */
    public static final long REPLAY_MRS = 1L << 22;

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
     */
    public record HostSpec(long ramBytes, long memlockBytes, boolean capIpcLock, long hugepages2M, long hugepages1G,
        int maxMapCount, int processes)
    {
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
    }

    private Planner()
    {
    }

    /**
     * Plans a workload. Per process (the limits the kernel keeps per process): RLIMIT_MEMLOCK and
     * {@code vm.max_map_count}, counted as one mapping per region (an upper bound: regions carved from one
     * allocation share a mapping). Per device (all processes share it): max_mr and the MTT, whose reservations
     * are replayed MR by MR on the device's allocator (so mlx4's buddy rounding and fragmentation between groups of
     * different sizes count) for up to {@link #REPLAY_MRS} MRs. Per host: RAM and the hugetlb pools.
     *
     * @param profile  the device.
     * @param host     the host.
     * @param workload the registrations of one process.
     * @return the plan.
     */
    public static Plan plan(final DeviceProfile profile, final HostSpec host, final Workload workload)
    {
        final List<Plan.GroupResult> groups = new ArrayList<>();
        final Notes notes = new Notes();
        final Map<Shape, Plan.GroupResult> measured = new HashMap<>();
        final DeviceProfile lifted = lifted(profile);
        for (final Workload.Group g : workload.groups())
        {
            final Shape shape = new Shape(g.sizeBytes(), g.backing(), g.access(), g.iovaAlignBytes(),
                Math.min(g.count(), SAMPLE_MRS));
            final Plan.GroupResult m = measured.computeIfAbsent(shape, k -> measure(lifted, host, g, notes));
            groups.add(new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), g.lifetime(),
                m.pageSizeBytes(), m.mttEntriesPerMr(), m.mttReservedPerMr(), m.pinnedBytesPerMr(), m.regNsPerMr(),
                m.deregNsPerMr(), g.requestsPerSecond(), m.sampled()));
            if (g.count() > m.sampled() && m.sampled() > 0)
            {
                notes.add(String.format(Locale.ROOT, "group %s: measured on %d of %,d MRs, scaled to the rest",
                    g.name(), m.sampled(), g.count()));
            }
            if (g.lifetime() == Workload.Lifetime.PER_REQUEST && g.requestsPerSecond() == 0)
            {
                notes.add("group " + g.name() + ": per-request without requestsPerSecond: its cost per second on the "
                    + "request path is not counted");
            }
        }
        try
        {
            return total(profile, host, groups, notes, workload);
        }
        catch (final ArithmeticException e)
        {
            throw new IllegalArgumentException("the workload's totals do not fit in 64 bits (" + host.processes()
                + " processes of " + groups.size() + " groups): plan fewer or smaller regions", e);
        }
    }

    /** What a measurement depends on: groups of the same shape share one. */
    private record Shape(long sizeBytes, String backing, String access, long iovaAlignBytes, long samples)
    {
    }

    /** Notes and advice, capped so that a workload of many groups does not print thousands of lines. */
    private static final class Notes
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

    private static Plan total(final DeviceProfile profile, final HostSpec host, final List<Plan.GroupResult> groups,
        final Notes notes, final Workload workload)
    {
        final int n = host.processes();
        long mrs = 0;
        long mtt = 0;
        long pinned = 0;
        long pinnedRam = 0;
        long startNs = 0;
        long firstUseNs = 0;
        long hotNs = 0;
        long maxRegion = 0;
        long pages2M = 0;
        long pages1G = 0;
        for (final Plan.GroupResult r : groups)
        {
            mrs = Math.addExact(mrs, r.mrs());
            mtt = Math.addExact(mtt, Math.multiplyExact(r.mrs(), r.mttReservedPerMr()));
            pinned = Math.addExact(pinned, Math.multiplyExact(r.mrs(), r.pinnedBytesPerMr()));
            pinnedRam = Math.addExact(pinnedRam, Math.multiplyExact(r.mrs(), ramPerMr(r)));
            switch (r.lifetime())
            {
                case STATIC -> startNs = Math.addExact(startNs, Math.multiplyExact(r.mrs(), r.regNsPerMr()));
                case CACHED -> firstUseNs = Math.addExact(firstUseNs, Math.multiplyExact(r.mrs(), r.regNsPerMr()));
                case PER_REQUEST -> hotNs = Math.addExact(hotNs, Math.multiplyExact(r.requestsPerSecond(),
                    r.regNsPerMr() + r.deregNsPerMr()));
            }
            maxRegion = Math.max(maxRegion, r.sizeBytes());
            pages2M = Math.addExact(pages2M, Math.multiplyExact(r.mrs(), hugePagesPerMr(r, "2m")));
            pages1G = Math.addExact(pages1G, Math.multiplyExact(r.mrs(), hugePagesPerMr(r, "1g")));
        }
        final long mttCapacity = profile.mtt().entries();
        final long maxMr = profile.attributes().maxMr() - 1L;
        final long memlock = host.capIpcLock() ? -1 : host.memlockBytes();
        final long ramFree = host.ramBytes() - poolBytes(host);
        final Replay replay = replay(profile, groups, n);
        if (replay.replayedMrs < Math.multiplyExact((long)n, mrs) && replay.failedAt < 0)
        {
            notes.add(String.format(Locale.ROOT, "MTT reservations replayed on the allocator for the first %,d of "
                + "%,d MRs; the rest added up", replay.replayedMrs, (long)n * mrs));
        }
        final long nMtt = Math.multiplyExact((long)n, mtt);
        final boolean mttFits = nMtt <= mttCapacity && replay.failedAt < 0;
        final List<Plan.Limit> limits = new java.util.ArrayList<>(List.of(
            limit("max_mr", Math.multiplyExact((long)n, mrs), maxMr, "MRs"),
            new Plan.Limit("MTT entries", nMtt, mttCapacity, mttFits, "entries"),
            limit("max_mr_size", maxRegion, profile.attributes().maxMrSizeBytes(), "bytes"),
            limit("RLIMIT_MEMLOCK", pinned, memlock, "bytes"),
            limit("vm.max_map_count", mrs, host.maxMapCount(), "mappings"),
            limit("hugetlb 2 MiB pool", Math.multiplyExact((long)n, pages2M), host.hugepages2M(), "pages"),
            limit("hugetlb 1 GiB pool", Math.multiplyExact((long)n, pages1G), host.hugepages1G(), "pages"),
            limit("RAM", Math.multiplyExact((long)n, pinnedRam), ramFree, "bytes")));
        final String first = firstLimit(groups, profile, host, maxMr, mttCapacity, memlock, ramFree, replay);
        final String pblLimit = translationLimit(profile, groups, limits);
        if (groups.stream().anyMatch(g -> g.mrs() > 1))
        {
            notes.add("vm.max_map_count counts one mapping per region: an upper bound, as regions carved from one "
                + "allocation share a mapping");
        }
        if (poolBytes(host) > 0)
        {
            notes.add("RAM available to the other groups is RAM less the hugetlb pools (" + Units.bytes(ramFree)
                + ")");
        }
        final long cacheFootprint = Math.multiplyExact((long)n, Math.addExact(mrs, mtt));
        final Notes advice = new Notes();
        advice(profile, host, groups, workload, nMtt, pinned, Math.multiplyExact((long)n, pages2M), advice);
        return new Plan(profile.name() + " (" + profile.driver() + ")", groups, new Plan.Totals(n,
            Math.multiplyExact((long)n, mrs), nMtt, Math.multiplyExact((long)n, pinned), startNs, firstUseNs, hotNs,
            cacheFootprint, profile.cacheEntries()), limits, first != null ? first : pblLimit, advice.list(),
            notes.list());
    }

    /** Bytes of the hugetlb pools the host reserves (out of RAM). */
    public static long poolBytes(final HostSpec host)
    {
        return Math.addExact(Math.multiplyExact(host.hugepages2M(), 2L << 20),
            Math.multiplyExact(host.hugepages1G(), 1L << 30));
    }

    /** hugetlb pages of that size one MR of the group takes (0 for other backings). */
    private static long hugePagesPerMr(final Plan.GroupResult g, final String backing)
    {
        if (!g.backing().equals(backing))
        {
            return 0;
        }
        return ceilDiv(g.sizeBytes(), backing.equals("2m") ? 2L << 20 : 1L << 30);
    }

    /** RAM outside the hugetlb pools one MR of the group pins (hugetlb groups take theirs from the pools). */
    private static long ramPerMr(final Plan.GroupResult g)
    {
        return g.backing().equals("2m") || g.backing().equals("1g") ? 0 : g.pinnedBytesPerMr();
    }

    /**
     * The per-MR translation limit of a driver whose device walks a page-buffer list in levels (bnxt_re, hns, qedr:
     * {@link dev.rnicsim.simnic.DriverTraits#maxTranslationEntries()}): adds its row to the limits.
     *
     * @return the group that breaks it and how, or null when every group fits (or the driver has no such limit).
     */
    private static String translationLimit(final DeviceProfile profile, final List<Plan.GroupResult> groups,
        final List<Plan.Limit> limits)
    {
        final dev.rnicsim.simnic.DriverTraits t = profile.traits();
        if (t.maxTranslationEntries() == 0 || groups.isEmpty())
        {
            return null;
        }
        Plan.GroupResult worst = groups.getFirst();
        for (final Plan.GroupResult g : groups)
        {
            worst = g.mttEntriesPerMr() > worst.mttEntriesPerMr() ? g : worst;
        }
        limits.add(limit("entries per MR (" + t.translation() + ")", worst.mttEntriesPerMr(),
            t.maxTranslationEntries(), "entries"));
        return worst.mttEntriesPerMr() <= t.maxTranslationEntries() ? null : String.format(Locale.ROOT,
            "entries per MR: group %s needs %,d translation entries of %s per MR; %s's %s holds %,d (%s), so its "
            + "registration fails with %s: use larger pages or smaller MRs", worst.name(), worst.mttEntriesPerMr(),
            Units.bytes(worst.pageSizeBytes()), t.driver(), t.translation(), t.maxTranslationEntries(), t.source(),
            t.translationOverflowErrno());
    }

    /** The outcome of replaying the MTT reservations: where the first failed (-1: none) and how many were tried. */
    private record Replay(long failedAt, long replayedMrs, long freeEntries, long largestFreeBlock, long wanted)
    {
    }

    /** Replays every MR's MTT reservation, process after process and group after group, up to REPLAY_MRS. */
    private static Replay replay(final DeviceProfile profile, final List<Plan.GroupResult> groups, final int n)
    {
        final MttOccupancy mtt = new MttOccupancy(profile.mtt());
        long done = 0;
        for (int p = 0; p < n; p++)
        {
            for (final Plan.GroupResult g : groups)
            {
                if (g.mttEntriesPerMr() <= 0)
                {
                    continue;
                }
                for (long i = 0; i < g.mrs(); i++)
                {
                    if (done >= REPLAY_MRS)
                    {
                        return new Replay(-1, done, mtt.freeEntries(), mtt.largestFreeBlock(), 0);
                    }
                    if (mtt.tryReserve(g.mttEntriesPerMr()) < 0)
                    {
                        return new Replay(done + 1, done, mtt.freeEntries(), mtt.largestFreeBlock(),
                            g.mttEntriesPerMr());
                    }
                    done++;
                }
            }
        }
        return new Replay(-1, done, mtt.freeEntries(), mtt.largestFreeBlock(), 0);
    }

    private static Plan.Limit limit(final String name, final long required, final long available, final String unit)
    {
        final boolean fits = available < 0 || Long.compareUnsigned(required, available) <= 0;
        return new Plan.Limit(name, required, available, fits, unit);
    }

    /**
     * Registers up to {@link #SAMPLE_MRS} regions of the group on a fresh simulated host, reads one MR's cost, then
     * deregisters one to read the cost of deregistration.
     */
    private static Plan.GroupResult measure(final DeviceProfile profile, final HostSpec host, final Workload.Group g,
        final Notes notes)
    {
        final SimFabric fabric = new SimFabric();
        final long samples = Math.min(g.count(), SAMPLE_MRS);
        final long fullSize = g.sizeBytes();
        final long sliceSize = Math.min(fullSize, SAMPLE_REGION_BYTES);
        final long hugeNeeded2M = g.backing().equals("2m") ? samples * ceilDiv(sliceSize, 2L << 20) : 0;
        final long hugeNeeded1G = g.backing().equals("1g") ? samples * ceilDiv(sliceSize, 1L << 30) : 0;
        final long pinnedSample = samples * sliceSize;
        final long ram = Math.min(HostConfig.MAX_PHYSICAL_MEMORY_BYTES, Math.max(host.ramBytes(),
            pinnedSample + hugeNeeded2M * (2L << 20) + hugeNeeded1G * (1L << 30) + (1L << 30)));
        final SimHost h = fabric.addHost("plan", HostConfig.builder().physicalMemoryBytes(align(ram, 1L << 30))
            .hugepages2M(hugeNeeded2M).hugepages1G(hugeNeeded1G).aged(true).build());
        final SimDevice d = h.addDevice("sim:plan/" + profile.name(), profile);
        final UserProcess p = h.host().spawn("planner").capIpcLock(true);
        try (SimContext c = d.open(p))
        {
            final ProtectionDomain pd = c.allocPd();
            final Backing backing = switch (g.backing())
            {
                case "thp" -> Backing.TRANSPARENT_HUGE_PAGES;
                case "2m" -> Backing.HUGETLB_2M;
                case "1g" -> Backing.HUGETLB_1G;
                default -> Backing.BASE_PAGES;
            };
            final Set<Access> access = EnumSet.copyOf(Spec.accessFlags(g.access()));
            SimMr last = null;
            long regNs = 0;
            for (long i = 0; i < samples; i++)
            {
                final long addr = c.memory().allocate(sliceSize, backing);
                if (backing == Backing.TRANSPARENT_HUGE_PAGES)
                {
                    p.touch(addr, sliceSize, true);
                }
                last = (SimMr)(g.iovaAlignBytes() == 0 ? pd.regMr(addr, sliceSize, access)
                    : pd.regMr(addr, sliceSize, g.iovaAlignBytes() + (addr & 4095), access));
                regNs = lastEvent(d).durationNs();
            }
            final long entries1 = last.mttEntries();
            final long reserved1 = last.mttEntriesReserved();
            final long pageSize = last.pageSizeBytes();
            final long pinned1 = last.pinnedPages() << 12;
            last.close();
            final long deregNs = lastEvent(d).durationNs();
            if (sliceSize < fullSize)
            {
                // One MR per page of its page size: entries, pins and the cost model's price scale with the size.
                final double scale = (double)fullSize / sliceSize;
                final long entries = (long)Math.ceil(entries1 * scale);
                final long pages = ceilDiv(fullSize, 4096);
                final long leafBytes = switch (g.backing())
                {
                    case "thp", "2m" -> 2L << 20;
                    case "1g" -> 1L << 30;
                    default -> 4096;
                };
                notes.add(String.format(Locale.ROOT, "group %s: one MR of %s measured on a %s slice, scaled x%.0f",
                    g.name(), Units.bytes(fullSize), Units.bytes(sliceSize), scale));
                return new Plan.GroupResult(g.name(), g.count(), fullSize, g.backing(), g.lifetime(), pageSize,
                    entries, d.tables().mtt().reservedFor(entries), pages << 12, fabric.costModel().registrationNs(
                    pages, ceilDiv(fullSize, leafBytes), entries), fabric.costModel().deregistrationNs(pages),
                    g.requestsPerSecond(), samples);
            }
            return new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), g.lifetime(), pageSize,
                entries1, reserved1, pinned1, regNs, deregNs, g.requestsPerSecond(), samples);
        }
        catch (final VerbsException e)
        {
            notes.add("group " + g.name() + ": one MR cannot be registered at all on this device: " + e.getMessage());
            return new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), g.lifetime(), 0, 0, 0,
                ceilDiv(g.sizeBytes(), 4096) << 12, 0, 0, g.requestsPerSecond(), 0);
        }
    }

    private static RegistrationEvent lastEvent(final SimDevice d)
    {
        final List<RegistrationEvent> trace = d.recentRegistrations();
        return trace.get(trace.size() - 1);
    }

    /**
     * The first MR at which a limit is passed: per-process limits counted over one process's groups in order,
     * device and host limits over every process's (process after process); the MTT from the allocator replay.
     */
    /** One limit as the first-limit search walks it: what one MR of a group takes of it. */
    private record Walk(String name, long available, boolean perProcess,
        java.util.function.ToLongFunction<Plan.GroupResult> perMr)
    {
    }

    private static String firstLimit(final List<Plan.GroupResult> groups, final DeviceProfile profile,
        final HostSpec host, final long maxMr, final long mttCapacity, final long memlock, final long ramFree,
        final Replay replay)
    {
        for (final Plan.GroupResult g : groups)
        {
            if (g.sampled() == 0)
            {
                return "no MR of group '" + g.name() + "' can be registered on " + profile.name() + " (see the notes)";
            }
        }
        final long maxMrSize = profile.attributes().maxMrSizeBytes();
        // In the order a real start-up meets them: mmap (mappings, hugetlb pools), then ibv_reg_mr (length, pin
        // against RLIMIT_MEMLOCK and RAM, MPT index, MTT entries). The first in this order wins a tie.
        final List<Walk> walks = List.of(
            new Walk("vm.max_map_count", host.maxMapCount(), true, g -> 1),
            new Walk("hugetlb 2 MiB pool", host.hugepages2M(), false, g -> hugePagesPerMr(g, "2m")),
            new Walk("hugetlb 1 GiB pool", host.hugepages1G(), false, g -> hugePagesPerMr(g, "1g")),
            new Walk("max_mr_size", 0, true, g -> Long.compareUnsigned(g.sizeBytes(), maxMrSize) > 0 ? 1 : 0),
            new Walk("RLIMIT_MEMLOCK", memlock, true, Plan.GroupResult::pinnedBytesPerMr),
            new Walk("RAM", ramFree, false, Planner::ramPerMr),
            new Walk("max_mr", maxMr, false, g -> 1),
            new Walk("MTT entries", mttCapacity, false, Plan.GroupResult::mttReservedPerMr));
        final int n = host.processes();
        long best = Long.MAX_VALUE;
        String what = null;
        for (final Walk w : walks)
        {
            if (w.available() < 0)
            {
                continue;
            }
            long used = 0;
            long before = 0;
            search:
            for (int proc = 0; proc < (w.perProcess() ? 1 : n); proc++)
            {
                for (final Plan.GroupResult g : groups)
                {
                    final long per = w.perMr().applyAsLong(g);
                    if (per > 0 && (g.mrs() > (w.available() - used) / per))
                    {
                        final long at = before + (w.available() - used) / per + 1;
                        if (at < best)
                        {
                            best = at;
                            what = at(w.name(), at, proc, n, w.perProcess(), g);
                            if (w.name().equals("max_mr_size"))
                            {
                                what += ": " + Units.bytes(g.sizeBytes()) + " regions exceed max_mr_size="
                                    + Long.toUnsignedString(maxMrSize);
                            }
                        }
                        break search;
                    }
                    used += g.mrs() * per;
                    before += g.mrs();
                }
            }
        }
        if (replay.failedAt() > 0 && replay.failedAt() < best)
        {
            long left = replay.failedAt();
            int proc = 0;
            Plan.GroupResult where = groups.get(0);
            outer:
            for (proc = 0; proc < n; proc++)
            {
                for (final Plan.GroupResult g : groups)
                {
                    if (left <= g.mrs() && g.mttEntriesPerMr() > 0)
                    {
                        where = g;
                        break outer;
                    }
                    left -= g.mttEntriesPerMr() > 0 ? g.mrs() : 0;
                }
            }
            what = at("MTT entries", replay.failedAt(), proc, n, false, where) + String.format(Locale.ROOT,
                ": the allocator has no free block for %,d entries (%,d free, largest block %,d)", replay.wanted(),
                replay.freeEntries(), replay.largestFreeBlock());
        }
        return what;
    }

    private static String at(final String limit, final long mr, final int proc, final int processes,
        final boolean perProcess, final Plan.GroupResult g)
    {
        final String whose = processes == 1 ? "" : perProcess ? "in each process, " : String.format(Locale.ROOT,
            "counting all %d processes, in process %d, ", processes, proc + 1);
        return String.format(Locale.ROOT, "%s exhausted at the %,d%s MR (%sgroup '%s', %s each)", limit, mr,
            suffix(mr), whose, g.name(), Units.bytes(g.sizeBytes()));
    }

    private static void advice(final DeviceProfile profile, final HostSpec host,
        final List<Plan.GroupResult> groups, final Workload workload, final long mtt, final long pinned,
        final long pages2M, final Notes out)
    {
        if (pages2M > host.hugepages2M())
        {
            out.add("set vm.nr_hugepages=" + pages2M + " (2 MiB pages for the hugetlb-backed groups)");
        }
        if (!host.capIpcLock() && host.memlockBytes() >= 0 && pinned > host.memlockBytes())
        {
            out.add("raise RLIMIT_MEMLOCK to at least " + Units.bytes(align(pinned, 1L << 20))
                + " (ulimit -l " + (align(pinned, 1L << 20) >> 10) + "), or unlimited");
        }
        if (profile.mtt().allocator() == MttAllocatorKind.BUDDY)
        {
            final int perSeg = profile.mtt().logMttsPerSeg();
            int log = 1;
            final long wanted = Math.max(mtt, 2 * host.ramBytes() / 4096);
            while ((1L << (log + perSeg)) < wanted && log < 30)
            {
                log++;
            }
            out.add("mlx4: log_num_mtt=" + log + " with log_mtts_per_seg=" + perSeg + " covers the workload and"
                + " 2 x RAM at 4 KiB pages (the Open MPI rule)");
            final long registrable = profile.mtt().entries() * 4096;
            if (registrable < 2 * host.ramBytes())
            {
                out.add(String.format(Locale.ROOT, "WARNING: %s can register %s at 4 KiB pages, less than %s 2 x RAM "
                    + "(Open MPI warns the same)", profile.name(), Units.bytes(registrable),
                    registrable < host.ramBytes() ? "RAM and" : ""));
            }
        }
        // MR pages of 2 MiB or more need the device to support them and an iova that does not forbid them.
        final boolean hugeMrPages = (profile.attributes().pageSizeCap() & -(2L << 20)) != 0;
        for (int i = 0; i < groups.size(); i++)
        {
            final Plan.GroupResult g = groups.get(i);
            final long iovaAlign = workload.groups().get(i).iovaAlignBytes();
            if (g.lifetime() == Workload.Lifetime.PER_REQUEST && g.sampled() > 0)
            {
                final long perRequest = g.regNsPerMr() + g.deregNsPerMr();
                out.add(String.format(Locale.ROOT, "group %s registers per request: %s per request (reg %s + dereg "
                    + "%s)%s; a pool of %,d regions registered at start-up would take it off the request path",
                    g.name(), Units.duration(perRequest), Units.duration(g.regNsPerMr()),
                    Units.duration(g.deregNsPerMr()), g.requestsPerSecond() == 0 ? "" : String.format(Locale.ROOT,
                    ", at %,d requests/s %.1f %% of one core", g.requestsPerSecond(),
                    perRequest * (double)g.requestsPerSecond() / 1e7), g.mrs()));
            }
            if ((g.backing().equals("4k") || g.backing().equals("thp")) && hugeMrPages
                && g.sizeBytes() >= 2L << 20 && (iovaAlign == 0 || iovaAlign >= 2L << 20))
            {
                final long huge = ceilDiv(g.sizeBytes(), 2L << 20);
                if (g.mttEntriesPerMr() > huge)
                {
                    out.add(String.format(Locale.ROOT, "group %s on 2 MiB huge pages: %d MTT entries per MR instead"
                        + " of %d (%d times fewer)", g.name(), huge, g.mttEntriesPerMr(), g.mttEntriesPerMr() / huge));
                }
            }
        }
    }

    private static String suffix(final long n)
    {
        final long t = n % 100;
        if (t >= 11 && t <= 13)
        {
            return "th";
        }
        return switch ((int)(n % 10))
        {
            case 1 -> "st";
            case 2 -> "nd";
            case 3 -> "rd";
            default -> "th";
        };
    }

    private static long ceilDiv(final long a, final long b)
    {
        return (a + b - 1) / b;
    }

    private static long align(final long v, final long a)
    {
        return (v + a - 1) / a * a;
    }
}
