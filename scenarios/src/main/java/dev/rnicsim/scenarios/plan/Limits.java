package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.MttOccupancy;
import dev.rnicsim.simnic.CostModel;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DriverTraits;
import dev.rnicsim.simnic.ProviderRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The limits a workload meets once its groups are measured, each where the real stack keeps it. Per process:
 * RLIMIT_MEMLOCK (the pin charge of {@code ib_umem_get}, lifted by CAP_IPC_LOCK), {@code vm.max_map_count} (one
 * mapping per MR, two with fork support), and its GPU's BAR1 and memory. Per device, shared by every process:
 * {@code max_mr}, {@code max_mr_size}, the MTT (each MR's reservation replayed on the device's own allocator, so
 * mlx4's buddy rounding and fragmentation count) and, for drivers whose device walks a page-buffer list, the
 * translation entries one MR may have (bnxt_re, hns, qedr). Per host: the hugetlb pools and the RAM outside them.
 * Stateless.
 */
final class Limits
{
    private Limits()
    {
    }

    /**
     * Totals the groups over the host's processes and checks every limit against them, naming the first to break
     * and the MR at which it breaks ({@link FirstLimit}).
     *
     * @return the plan without advice.
     * @throws ArithmeticException when a total does not fit in 64 bits.
     */
    static Plan total(final DeviceProfile profile, final Planner.HostSpec host, final List<Plan.GroupResult> groups,
        final Planner.Notes notes, final Planner.Contiguity contiguity)
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
        long bar1 = 0;
        long vram = 0;
        for (final Plan.GroupResult r : groups)
        {
            mrs = Math.addExact(mrs, r.mrs());
            mtt = Math.addExact(mtt, Math.multiplyExact(r.mrs(), r.mttReservedPerMr()));
            pinned = Math.addExact(pinned, Math.multiplyExact(r.mrs(), r.pinnedBytesPerMr()));
            pinnedRam = Math.addExact(pinnedRam, Math.multiplyExact(r.mrs(), ramPerMr(r)));
            bar1 = Math.addExact(bar1, Math.multiplyExact(r.mrs(), r.bar1BytesPerMr()));
            vram = Math.addExact(vram, Math.multiplyExact(r.mrs(), r.gpuBytesPerMr()));
            switch (r.lifetime())
            {
                case STATIC -> startNs = Math.addExact(startNs, Math.multiplyExact(r.mrs(), r.regNsPerMr()));
                case CACHED -> firstUseNs = Math.addExact(firstUseNs, Math.multiplyExact(r.mrs(), r.regNsPerMr()));
                case PER_REQUEST -> hotNs = Math.addExact(hotNs, Math.multiplyExact(r.requestsPerSecond(),
                    r.regNsPerMr() + r.deregNsPerMr()));
            }
            maxRegion = r.backing().equals("gpu") || r.kind().equals("odp-implicit") ? maxRegion
                : Math.max(maxRegion, r.sizeBytes());
            pages2M = Math.addExact(pages2M, Math.multiplyExact(r.mrs(), hugePagesPerMr(r, "2m")));
            pages1G = Math.addExact(pages1G, Math.multiplyExact(r.mrs(), hugePagesPerMr(r, "1g")));
        }
        final long mttCapacity = profile.mtt().entries();
        final long maxMr = profile.registrableMrs();
        final long memlock = host.capIpcLock() ? -1 : host.memlockBytes();
        final long ramFree = host.ramBytes() - poolBytes(host);
        final Replay replay = replay(profile, groups, n);
        final long withEntries = Math.multiplyExact((long)n, groups.stream().filter(g -> g.mttEntriesPerMr() > 0)
            .mapToLong(Plan.GroupResult::mrs).sum());
        if (replay.replayedMrs < withEntries && replay.failedAt < 0)
        {
            notes.add(String.format(Locale.ROOT, "MTT reservations replayed on the allocator for the first %,d of "
                + "%,d MRs; the rest added up", replay.replayedMrs, withEntries));
        }
        final long nMtt = Math.multiplyExact((long)n, mtt);
        final boolean mttFits = nMtt <= mttCapacity && replay.failedAt < 0;
        final List<Plan.Limit> limits = new ArrayList<>(List.of(
            limit("max_mr", Math.multiplyExact((long)n, mrs), maxMr, "MRs"),
            new Plan.Limit("MTT entries", nMtt, mttCapacity, mttFits, "entries"),
            limit("max_mr_size", maxRegion, profile.follows(ProviderRule.MR_SIZE_IN_DEVICE_PAGES) ? -1L
                : profile.attributes().maxMrSizeBytes(), "bytes"),
            limit("RLIMIT_MEMLOCK", pinned, memlock, "bytes"),
            limit("vm.max_map_count", Math.multiplyExact(mrs, host.mappingsPerMr()), host.maxMapCount(), "mappings"),
            limit("hugetlb 2 MiB pool", Math.multiplyExact((long)n, pages2M), host.hugepages2M(), "pages"),
            limit("hugetlb 1 GiB pool", Math.multiplyExact((long)n, pages1G), host.hugepages1G(), "pages"),
            limit("RAM", Math.multiplyExact((long)n, pinnedRam), ramFree, "bytes")));
        if (groups.stream().anyMatch(g -> g.backing().equals("gpu")))
        {
            limits.add(limit("GPU BAR1", bar1, host.gpuBar1Bytes(), "bytes"));
            limits.add(limit("GPU memory", vram, host.gpuVramBytes(), "bytes"));
        }
        final Plan.Breach pblLimit = translationLimit(profile, groups, limits);
        final Plan.Breach found = FirstLimit.find(groups, profile, host, maxMr, mttCapacity, memlock, ramFree,
            replay);
        final Plan.Breach first = found != null ? found : pblLimit;
        if (host.forkSafe())
        {
            notes.add("--fork-safe: each MR is MADV_DONTFORK (ibv_fork_init), splitting the mapping it is carved "
                + "from, so it counts 2 mappings against vm.max_map_count; the madvise and its split add "
                + Sizes.duration(CostModel.defaults().forkSafetyNs(1, 2, 0))
                + " to each registration and deregistration");
        }
        if (!host.forkSafe() && groups.stream().anyMatch(g -> g.mrs() > 1))
        {
            notes.add("vm.max_map_count counts one mapping per region: an upper bound, as regions carved from one "
                + "allocation share a mapping");
        }
        if (poolBytes(host) > 0)
        {
            notes.add("RAM available to the other groups is RAM less the hugetlb pools (" + Sizes.iec(ramFree) + ")");
        }
        final long cacheFootprint = Math.multiplyExact((long)n, Math.addExact(mrs, mtt));
        return new Plan(profile.name() + " (" + profile.driver() + ")", groups, new Plan.Totals(n,
            Math.multiplyExact((long)n, mrs), nMtt, Math.multiplyExact((long)n, pinned), startNs, firstUseNs, hotNs,
            cacheFootprint, profile.cacheEntries()), List.copyOf(limits), first == null ? null : first.message(),
            first, List.of(), List.of(), notes.list(), contiguity.word(), null);
    }

    /** Bytes of the hugetlb pools the host reserves (out of RAM). */
    static long poolBytes(final Planner.HostSpec host)
    {
        return Math.addExact(Math.multiplyExact(host.hugepages2M(), 2L << 20),
            Math.multiplyExact(host.hugepages1G(), 1L << 30));
    }

    /** hugetlb pages of that size one MR of the group takes (0 for other backings). */
    static long hugePagesPerMr(final Plan.GroupResult g, final String backing)
    {
        if (!g.backing().equals(backing))
        {
            return 0;
        }
        return Planner.ceilDiv(g.sizeBytes(), backing.equals("2m") ? 2L << 20 : 1L << 30);
    }

    /** RAM outside the hugetlb pools one MR of the group pins (hugetlb groups take theirs from the pools). */
    static long ramPerMr(final Plan.GroupResult g)
    {
        return g.backing().equals("2m") || g.backing().equals("1g") ? 0 : g.pinnedBytesPerMr();
    }

    /**
     * The per-MR translation limit of a driver whose device walks a page-buffer list in levels (bnxt_re, hns, qedr:
     * {@link DriverTraits#maxTranslationEntries()}): adds its row to the limits.
     *
     * @return the group that breaks it and how, or null when every group fits (or the driver has no such limit).
     */
    private static Plan.Breach translationLimit(final DeviceProfile profile, final List<Plan.GroupResult> groups,
        final List<Plan.Limit> limits)
    {
        final DriverTraits t = profile.traits();
        if (t.maxTranslationEntries() == 0 || groups.isEmpty())
        {
            return null;
        }
        Plan.GroupResult worst = groups.getFirst();
        long before = 0;
        long beforeWorst = 0;
        for (final Plan.GroupResult g : groups)
        {
            if (g.mttEntriesPerMr() > worst.mttEntriesPerMr())
            {
                worst = g;
                beforeWorst = before;
            }
            before += g.mrs();
        }
        final String limit = "entries per MR (" + t.translation() + ")";
        limits.add(limit(limit, worst.mttEntriesPerMr(), t.maxTranslationEntries(), "entries"));
        return worst.mttEntriesPerMr() <= t.maxTranslationEntries() ? null : new Plan.Breach(limit, beforeWorst + 1,
            worst.name(), 0, String.format(Locale.ROOT, "entries per MR: group %s needs %,d translation entries of %s "
            + "per MR; %s's %s holds %,d (%s), so its registration fails with %s: use larger pages or smaller MRs",
            worst.name(), worst.mttEntriesPerMr(), Sizes.iec(worst.pageSizeBytes()), t.driver(), t.translation(),
            t.maxTranslationEntries(), t.source(), t.translationOverflowErrno()));
    }

    /** The outcome of replaying the MTT reservations: where the first failed (-1: none) and how many were tried. */
    record Replay(long failedAt, long replayedMrs, long freeEntries, long largestFreeBlock, long wanted)
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
                    if (done >= Planner.REPLAY_MRS)
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
}
