package dev.rnicsim.scenarios.plan;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.ProviderRule;
import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;

/**
 * The first limit a workload breaks, and the MR at which it breaks: per-process limits counted over one process's
 * groups in order, device and host limits over every process's (process after process); the MTT from the
 * allocator replay. Stateless.
 */
final class FirstLimit
{
    /** The limit a group breaks when the device cannot register one of its MRs at all. */
    static final String REFUSED = "registration refused";

    private FirstLimit()
    {
    }

    /** One limit as the search walks it: what one MR of a group takes of it. */
    private record Walk(String name, long available, boolean perProcess, ToLongFunction<Plan.GroupResult> perMr)
    {
    }

    /** Where a walk breaks. */
    private record At(long mr, int process, Plan.GroupResult group)
    {
    }

    /**
     * @param groups      the measured groups.
     * @param profile     the device.
     * @param host        the host.
     * @param maxMr       MRs the device can hold.
     * @param mttCapacity MTT entries of the device.
     * @param memlock     RLIMIT_MEMLOCK in bytes, -1 for none.
     * @param ramFree     RAM outside the hugetlb pools, in bytes.
     * @param replay      the MTT replay.
     * @return the first limit to break, or null when none does.
     */
    static Plan.Breach find(final List<Plan.GroupResult> groups, final DeviceProfile profile,
        final Planner.HostSpec host, final long maxMr, final long mttCapacity, final long memlock, final long ramFree,
        final Limits.Replay replay)
    {
        for (final Plan.GroupResult g : groups)
        {
            if (g.refusal() != null)
            {
                return new Plan.Breach(REFUSED, 0, g.name(), 0, "registration refused: " + profile.name() + " ("
                    + profile.driver() + ") cannot register group '" + g.name() + "': " + g.refusal());
            }
        }
        // EFA bounds an MR in the device's pages, not in bytes (ProviderRule.MR_SIZE_IN_DEVICE_PAGES)
        final long maxMrSize = profile.follows(ProviderRule.MR_SIZE_IN_DEVICE_PAGES) ? -1L
            : profile.attributes().maxMrSizeBytes();
        // In the order a real start-up meets them: mmap (mappings, hugetlb pools), GPU allocation, then ibv_reg_mr
        // (length, pin against RLIMIT_MEMLOCK and RAM, BAR1, MPT index, MTT entries). The first in this order wins a
        // tie.
        final List<Walk> walks = List.of(
            new Walk("vm.max_map_count", host.maxMapCount(), true, g -> host.mappingsPerMr()),
            new Walk("hugetlb 2 MiB pool", host.hugepages2M(), false, g -> Limits.hugePagesPerMr(g, "2m")),
            new Walk("hugetlb 1 GiB pool", host.hugepages1G(), false, g -> Limits.hugePagesPerMr(g, "1g")),
            new Walk("GPU memory", host.gpuVramBytes(), true, Plan.GroupResult::gpuBytesPerMr),
            new Walk("max_mr_size", 0, true, g -> !g.backing().equals("gpu") && !g.kind().equals("odp-implicit")
                && Long.compareUnsigned(g.sizeBytes(), maxMrSize) > 0 ? 1 : 0),
            new Walk("RLIMIT_MEMLOCK", memlock, true, Plan.GroupResult::pinnedBytesPerMr),
            new Walk("RAM", ramFree, false, Limits::ramPerMr),
            new Walk("GPU BAR1", host.gpuBar1Bytes(), true, Plan.GroupResult::bar1BytesPerMr),
            new Walk("max_mr", maxMr, false, g -> 1),
            new Walk("MTT entries", mttCapacity, false, Plan.GroupResult::mttReservedPerMr));
        final int n = host.processes();
        long best = Long.MAX_VALUE;
        Plan.Breach what = null;
        for (final Walk w : walks)
        {
            final At at = w.available() < 0 ? null : walk(w, groups, n);
            if (at != null && at.mr() < best)
            {
                best = at.mr();
                String message = describe(w.name(), at.mr(), at.process(), n, w.perProcess(), at.group());
                if (w.name().equals("max_mr_size"))
                {
                    message += ": " + Sizes.iec(at.group().sizeBytes()) + " regions exceed max_mr_size="
                        + Long.toUnsignedString(maxMrSize);
                }
                what = new Plan.Breach(w.name(), at.mr(), at.group().name(), process(at.process(), n,
                    w.perProcess()), message);
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
            what = new Plan.Breach("MTT entries", replay.failedAt(), where.name(), process(proc, n, false),
                describe("MTT entries", replay.failedAt(), proc, n, false, where) + String.format(Locale.ROOT,
                ": the allocator has no free block for %,d entries (%,d free, largest block %,d)", replay.wanted(),
                replay.freeEntries(), replay.largestFreeBlock()));
        }
        return what;
    }

    /** The process of a breach, from 1; 0 for a per-process limit that breaks in each of several processes. */
    private static int process(final int proc, final int processes, final boolean perProcess)
    {
        return perProcess && processes > 1 ? 0 : proc + 1;
    }

    private static At walk(final Walk w, final List<Plan.GroupResult> groups, final int n)
    {
        long used = 0;
        long before = 0;
        for (int proc = 0; proc < (w.perProcess() ? 1 : n); proc++)
        {
            for (final Plan.GroupResult g : groups)
            {
                final long per = w.perMr().applyAsLong(g);
                if (per > 0 && (g.mrs() > (w.available() - used) / per))
                {
                    return new At(before + (w.available() - used) / per + 1, proc, g);
                }
                used += g.mrs() * per;
                before += g.mrs();
            }
        }
        return null;
    }

    private static String describe(final String limit, final long mr, final int proc, final int processes,
        final boolean perProcess, final Plan.GroupResult g)
    {
        final String whose = processes == 1 ? "" : perProcess ? "in each process, " : String.format(Locale.ROOT,
            "counting all %d processes, in process %d, ", processes, proc + 1);
        return String.format(Locale.ROOT, "%s exhausted at the %,d%s MR (%sgroup '%s', %s each)", limit, mr,
            suffix(mr), whose, g.name(), Sizes.iec(g.sizeBytes()));
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
}
