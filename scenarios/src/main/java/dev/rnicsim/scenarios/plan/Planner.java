package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.MttAllocatorKind;
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
import java.util.List;
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

    /**
     * The host the workload runs on.
     *
     * @param ramBytes      physical memory in bytes.
     * @param memlockBytes  RLIMIT_MEMLOCK in bytes ({@link UserProcess#RLIM_INFINITY} for unlimited).
     * @param capIpcLock    true when the process holds CAP_IPC_LOCK.
     * @param hugepages2M   2 MiB pages reserved.
     * @param hugepages1G   1 GiB pages reserved.
     * @param maxMapCount   {@code vm.max_map_count}.
     */
    public record HostSpec(long ramBytes, long memlockBytes, boolean capIpcLock, long hugepages2M, long hugepages1G,
        int maxMapCount)
    {
    }

    private Planner()
    {
    }

    /**
     * @param profile  the device.
     * @param host     the host.
     * @param workload the registrations.
     * @return the plan.
     */
    public static Plan plan(final DeviceProfile profile, final HostSpec host, final Workload workload)
    {
        final List<Plan.GroupResult> groups = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
        for (final Workload.Group g : workload.groups())
        {
            groups.add(measure(profile, host, g, notes));
        }
        long mrs = 0;
        long mtt = 0;
        long pinned = 0;
        long regNs = 0;
        long maxRegion = 0;
        long pages2M = 0;
        long pages1G = 0;
        for (int i = 0; i < groups.size(); i++)
        {
            final Plan.GroupResult r = groups.get(i);
            mrs += r.mrs();
            mtt += r.mrs() * r.mttReservedPerMr();
            pinned += r.mrs() * r.pinnedBytesPerMr();
            regNs += r.mrs() * r.regNsPerMr();
            maxRegion = Math.max(maxRegion, r.sizeBytes());
            if (r.backing().equals("2m"))
            {
                pages2M += r.mrs() * ceilDiv(r.sizeBytes(), 2L << 20);
            }
            if (r.backing().equals("1g"))
            {
                pages1G += r.mrs() * ceilDiv(r.sizeBytes(), 1L << 30);
            }
        }
        final long mttCapacity = profile.mtt().entries();
        final long maxMr = profile.attributes().maxMr() - 1L;
        final long memlock = host.capIpcLock() ? -1 : host.memlockBytes();
        final List<Plan.Limit> limits = List.of(
            limit("max_mr", mrs, maxMr, "MRs"),
            limit("MTT entries", mtt, mttCapacity, "entries"),
            limit("max_mr_size", maxRegion, profile.attributes().maxMrSizeBytes(), "bytes"),
            limit("RLIMIT_MEMLOCK", pinned, memlock, "bytes"),
            limit("vm.max_map_count", mrs, host.maxMapCount(), "mappings"),
            limit("hugetlb 2 MiB pool", pages2M, host.hugepages2M(), "pages"),
            limit("hugetlb 1 GiB pool", pages1G, host.hugepages1G(), "pages"),
            limit("RAM", pinned, host.ramBytes(), "bytes"));
        final String first = firstLimit(groups, profile, host, maxMr, mttCapacity, memlock);
        final long cacheFootprint = mrs + mtt;
        return new Plan(profile.name() + " (" + profile.driver() + ")", groups, new Plan.Totals(mrs, mtt, pinned,
            regNs, cacheFootprint, profile.cacheEntries()), limits, first, advice(profile, host, groups, mtt, pinned,
            pages2M), notes);
    }

    private static Plan.Limit limit(final String name, final long required, final long available, final String unit)
    {
        final boolean fits = available < 0 || Long.compareUnsigned(required, available) <= 0;
        return new Plan.Limit(name, required, available, fits, unit);
    }

    /** Registers up to {@link #SAMPLE_MRS} regions of the group on a fresh simulated host and reads one MR's cost. */
    private static Plan.GroupResult measure(final DeviceProfile profile, final HostSpec host, final Workload.Group g,
        final List<String> notes)
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
            final Set<Access> access = EnumSet.copyOf(Spec.accessFlags(g.access() + ",local_write"));
            SimMr last = null;
            long regNs = 0;
            for (long i = 0; i < samples; i++)
            {
                final long addr = c.memory().allocate(sliceSize, backing);
                if (backing == Backing.TRANSPARENT_HUGE_PAGES)
                {
                    p.touch(addr, sliceSize, true);
                }
                last = (SimMr)pd.regMr(addr, sliceSize, access);
                final List<RegistrationEvent> trace = d.recentRegistrations();
                regNs = trace.get(trace.size() - 1).durationNs();
            }
            if (g.count() > samples)
            {
                notes.add(String.format(Locale.ROOT, "group %s: measured on %d of %,d MRs, scaled to the rest",
                    g.name(), samples, g.count()));
            }
            if (sliceSize < fullSize)
            {
                // One MR per page of its page size: entries, pins and the cost model's price scale with the size.
                final double scale = (double)fullSize / sliceSize;
                final long entries = (long)Math.ceil(last.mttEntries() * scale);
                final long pages = ceilDiv(fullSize, 4096);
                final long leafBytes = switch (g.backing())
                {
                    case "thp", "2m" -> 2L << 20;
                    case "1g" -> 1L << 30;
                    default -> 4096;
                };
                notes.add(String.format(Locale.ROOT, "group %s: one MR of %s measured on a %s slice, scaled x%.0f",
                    g.name(), Units.bytes(fullSize), Units.bytes(sliceSize), scale));
                return new Plan.GroupResult(g.name(), g.count(), fullSize, g.backing(), last.pageSizeBytes(), entries,
                    d.tables().mtt().reservedFor(entries), pages << 12, fabric.costModel().registrationNs(pages,
                    ceilDiv(fullSize, leafBytes), entries), samples);
            }
            return new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), last.pageSizeBytes(),
                last.mttEntries(), last.mttEntriesReserved(), last.pinnedPages() << 12, regNs, samples);
        }
        catch (final VerbsException e)
        {
            notes.add("group " + g.name() + ": one MR cannot be registered at all on this device: " + e.getMessage());
            return new Plan.GroupResult(g.name(), g.count(), g.sizeBytes(), g.backing(), 0, 0, 0,
                ceilDiv(g.sizeBytes(), 4096) << 12, 0, 0);
        }
    }

    /** The first MR (counting over the groups in order) at which a cumulative limit is passed. */
    private static String firstLimit(final List<Plan.GroupResult> groups, final DeviceProfile profile,
        final HostSpec host, final long maxMr, final long mttCapacity, final long memlock)
    {
        long best = Long.MAX_VALUE;
        String what = null;
        final String[] names = {"max_mr", "MTT entries", "RLIMIT_MEMLOCK", "vm.max_map_count", "RAM"};
        final long[] available = {maxMr, mttCapacity, memlock, host.maxMapCount(), host.ramBytes()};
        for (int k = 0; k < names.length; k++)
        {
            if (available[k] < 0)
            {
                continue;
            }
            long used = 0;
            long before = 0;
            for (final Plan.GroupResult g : groups)
            {
                if (g.regNsPerMr() == 0 && g.sampled() == 0)
                {
                    if (before + 1 < best)
                    {
                        best = before + 1;
                        what = "no MR of group '" + g.name() + "' can be registered on " + profile.name();
                    }
                    break;
                }
                final long per = switch (k)
                {
                    case 0, 3 -> 1;
                    case 1 -> g.mttReservedPerMr();
                    default -> g.pinnedBytesPerMr();
                };
                if (per > 0 && used + g.mrs() * per > available[k])
                {
                    final long n = (available[k] - used) / per + 1;
                    if (before + n < best)
                    {
                        best = before + n;
                        what = String.format(Locale.ROOT, "%s exhausted at the %,d%s MR (group '%s', %s each)",
                            names[k], before + n, suffix(before + n), g.name(), Units.bytes(g.sizeBytes()));
                    }
                    break;
                }
                used += g.mrs() * per;
                before += g.mrs();
            }
        }
        return what;
    }

    private static List<String> advice(final DeviceProfile profile, final HostSpec host,
        final List<Plan.GroupResult> groups, final long mtt, final long pinned, final long pages2M)
    {
        final List<String> out = new ArrayList<>();
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
        for (final Plan.GroupResult g : groups)
        {
            if (g.backing().equals("4k") || g.backing().equals("thp"))
            {
                final long huge = ceilDiv(g.sizeBytes(), 2L << 20);
                if (g.mttEntriesPerMr() > huge)
                {
                    out.add(String.format(Locale.ROOT, "group %s on 2 MiB huge pages: %d MTT entries per MR instead"
                        + " of %d (%d times fewer)", g.name(), huge, g.mttEntriesPerMr(), g.mttEntriesPerMr() / huge));
                }
            }
        }
        return out;
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
