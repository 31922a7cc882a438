package dev.rnicsim.scenarios.plan;

import java.util.List;

/**
 * The result of planning a workload on a device and a host.
 *
 * @param device      the profile's name and driver.
 * @param groups      per group: what one MR of it costs, measured on the simulated registration path.
 * @param totals      the whole workload.
 * @param limits      every limit: required, available, whether it fits.
 * @param firstLimit  the first limit to break and where, in words, or null when everything fits.
 * @param breach      the same as an object, or null when everything fits.
 * @param advice      recommendations computed from the model.
 * @param settings    the host and module settings the advice gives, one per line of advice that sets something.
 * @param notes       how the figures were obtained (sampling) and warnings.
 * @param contiguity  {@code worst} or {@code best}: which hugetlb MTT figure the verdict used.
 * @param cache       the translation-cache verdict.
 */
public record Plan(String device, List<GroupResult> groups, Totals totals, List<Limit> limits, String firstLimit,
    Breach breach, List<String> advice, List<Setting> settings, List<String> notes, String contiguity,
    CacheVerdict cache)
{
    /**
     * The first limit to break.
     *
     * @param limit   the limit's name, as in {@link Limit#name()}, or {@code registration refused} when the device
     *                cannot register one MR of a group.
     * @param atMr    the MR at which it breaks, counted from 1 in registration order (over all processes for a
     *                device or host limit), or 0 for a refusal.
     * @param group   the group of that MR.
     * @param process the process (from 1) registering it; 0 when the limit is per process and breaks in each.
     * @param message the same in words, with what was asked and what was left.
     */
    public record Breach(String limit, long atMr, String group, int process, String message)
    {
    }

    /**
     * A setting the advice gives: applying every one and planning again fits, unless the advice says what no
     * setting can fix.
     *
     * @param name  {@code vm.nr_hugepages}, {@code hugepages1g}, {@code RLIMIT_MEMLOCK}, {@code vm.max_map_count}
     *              or {@code log_num_mtt}.
     * @param value its value (RLIMIT_MEMLOCK in bytes, -1 for unlimited).
     */
    public record Setting(String name, long value)
    {
    }

    /**
     * What one MR of a group costs, and the group's share.
     *
     * @param name             the group's name.
     * @param mrs              regions in the group, live at once in one process.
     * @param sizeBytes        bytes per region.
     * @param backing          its backing.
     * @param lifetime         when its regions are registered.
     * @param pageSizeBytes    MR page size the driver chose.
     * @param mttEntriesPerMr  MTT entries one MR writes.
     * @param mttReservedPerMr MTT entries one MR reserves (allocator rounding included).
     * @param pinnedBytesPerMr bytes one MR pins.
     * @param regNsPerMr       simulated registration time of one MR, in ns.
     * @param deregNsPerMr     simulated deregistration time of one MR (invalidation stall included), in ns.
     * @param requestsPerSecond per-request groups: requests per second (0: not given).
     * @param sampled          MRs actually registered to measure it (0: the device refused it).
     * @param kind             {@code pinned}, {@code odp}, {@code odp-implicit}, {@code peer-memory} or
     *                         {@code dmabuf}.
     * @param mttEntriesBest   MTT entries one MR writes when its huge pages are physically contiguous.
     * @param mttEntriesWorst  MTT entries one MR writes when no two of its huge pages are adjacent (the same as best
     *                         for other backings).
     * @param bar1BytesPerMr   GPU BAR1 bytes one MR maps (0 for host memory).
     * @param gpuBytesPerMr    GPU memory one MR's buffer takes (0 for host memory).
     * @param refusal          why the device refuses the group's registration, or null.
     */
    public record GroupResult(String name, long mrs, long sizeBytes, String backing, Workload.Lifetime lifetime,
        long pageSizeBytes, long mttEntriesPerMr, long mttReservedPerMr, long pinnedBytesPerMr, long regNsPerMr,
        long deregNsPerMr, long requestsPerSecond, long sampled, String kind, long mttEntriesBest,
        long mttEntriesWorst, long bar1BytesPerMr, long gpuBytesPerMr, String refusal)
    {
        /**
         * A group of pinned host memory whose contiguity does not change its figures.
         *
         * @param name             the group's name.
         * @param mrs              regions.
         * @param sizeBytes        bytes per region.
         * @param backing          its backing.
         * @param lifetime         when its regions are registered.
         * @param pageSizeBytes    MR page size.
         * @param mttEntriesPerMr  MTT entries one MR writes.
         * @param mttReservedPerMr MTT entries one MR reserves.
         * @param pinnedBytesPerMr bytes one MR pins.
         * @param regNsPerMr       registration time, ns.
         * @param deregNsPerMr     deregistration time, ns.
         * @param requestsPerSecond per-request groups: requests per second.
         * @param sampled          MRs registered to measure it.
         */
        public GroupResult(final String name, final long mrs, final long sizeBytes, final String backing,
            final Workload.Lifetime lifetime, final long pageSizeBytes, final long mttEntriesPerMr,
            final long mttReservedPerMr, final long pinnedBytesPerMr, final long regNsPerMr, final long deregNsPerMr,
            final long requestsPerSecond, final long sampled)
        {
            this(name, mrs, sizeBytes, backing, lifetime, pageSizeBytes, mttEntriesPerMr, mttReservedPerMr,
                pinnedBytesPerMr, regNsPerMr, deregNsPerMr, requestsPerSecond, sampled, "pinned", mttEntriesPerMr,
                mttEntriesPerMr, 0, 0, null);
        }

        /**
         * @return true when its MRs pin host memory (not ODP, not GPU memory).
         */
        public boolean pinsHostMemory()
        {
            return kind.equals("pinned");
        }
    }

    /**
     * The workload's totals, over all the processes of the host unless said otherwise.
     *
     * @param processes          processes on the host, each running the whole workload.
     * @param mrs                MRs live at the peak.
     * @param mttEntries         MTT entries reserved at the peak (allocator rounding included).
     * @param pinnedBytes        bytes pinned at the peak.
     * @param registrationTimeNs one process: simulated time to register its static groups at start-up, before its
     *                           first operation (S23), in ns.
     * @param firstUseTimeNs     one process: simulated time its cached groups spend registering on first use, in ns.
     * @param hotPathNsPerSecond one process: simulated ns per second of registration and deregistration on the
     *                           request path of its per-request groups (1e9 is one core busy).
     * @param cacheFootprint     translation-cache lines the MRs' MPT and MTT entries would need.
     * @param cacheEntries       the device's translation-cache lines.
     */
    public record Totals(int processes, long mrs, long mttEntries, long pinnedBytes, long registrationTimeNs,
        long firstUseTimeNs, long hotPathNsPerSecond, long cacheFootprint, long cacheEntries)
    {
    }

    /**
     * One limit.
     *
     * @param name      e.g. {@code MTT entries}.
     * @param required  what the workload needs.
     * @param available what the device or host offers (-1: unlimited).
     * @param fits      true when required fits available.
     * @param unit      the unit of both numbers.
     */
    public record Limit(String name, long required, long available, boolean fits, String unit)
    {
        /**
         * @return available minus required (negative when it does not fit; Long.MAX_VALUE when unlimited).
         */
        public long headroom()
        {
            return available < 0 ? Long.MAX_VALUE : available - required;
        }
    }
}
