package dev.rnicsim.scenarios.plan;

import java.util.List;

/**
 * The result of planning a workload on a device and a host.
 *
 * @param device      the profile's name and driver.
 * @param groups      per group: what one MR of it costs, measured on the simulated registration path.
 * @param totals      the whole workload.
 * @param limits      every limit: required, available, whether it fits.
 * @param firstLimit  the first limit to break and where, or null when everything fits.
 * @param advice      recommendations computed from the model.
 * @param notes       how the figures were obtained (sampling) and warnings.
 */
public record Plan(String device, List<GroupResult> groups, Totals totals, List<Limit> limits, String firstLimit,
    List<String> advice, List<String> notes)
{
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
     * @param sampled          MRs actually registered to measure it.
     */
    public record GroupResult(String name, long mrs, long sizeBytes, String backing, Workload.Lifetime lifetime,
        long pageSizeBytes, long mttEntriesPerMr, long mttReservedPerMr, long pinnedBytesPerMr, long regNsPerMr,
        long deregNsPerMr, long requestsPerSecond, long sampled)
    {
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
