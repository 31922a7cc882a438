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
     * @param mrs              regions in the group.
     * @param sizeBytes        bytes per region.
     * @param backing          its backing.
     * @param pageSizeBytes    MR page size the driver chose.
     * @param mttEntriesPerMr  MTT entries one MR writes.
     * @param mttReservedPerMr MTT entries one MR reserves (allocator rounding included).
     * @param pinnedBytesPerMr bytes one MR pins.
     * @param regNsPerMr       simulated registration time of one MR, in ns.
     * @param sampled          MRs actually registered to measure it.
     */
    public record GroupResult(String name, long mrs, long sizeBytes, String backing, long pageSizeBytes,
        long mttEntriesPerMr, long mttReservedPerMr, long pinnedBytesPerMr, long regNsPerMr, long sampled)
    {
    }

    /**
     * The workload's totals.
     *
     * @param mrs                MRs.
     * @param mttEntries         MTT entries reserved.
     * @param pinnedBytes        bytes pinned.
     * @param registrationTimeNs simulated time to register everything at start-up, in ns.
     * @param cacheFootprint     translation-cache lines the MRs' MPT and MTT entries would need.
     * @param cacheEntries       the device's translation-cache lines.
     */
    public record Totals(long mrs, long mttEntries, long pinnedBytes, long registrationTimeNs, long cacheFootprint,
        long cacheEntries)
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
