package dev.rnicsim.mtt;

/**
 * A snapshot of the MTT's allocation counters, as the adapter's resource counters report them.
 *
 * <p>Immutable and thread safe.
 *
 * @param capacityEntries     entries in the table.
 * @param entriesInUse        entries reserved by live MRs, rounding included.
 * @param entriesRequested    entries live MRs asked for (without rounding).
 * @param entriesFree         entries not reserved.
 * @param largestFreeBlock    the largest number of entries one allocation can get now.
 * @param allocations         successful allocations since the table was created.
 * @param failures            allocations refused with ENOMEM.
 * @param frees               ranges given back.
 */
public record MttCounters(long capacityEntries, long entriesInUse, long entriesRequested, long entriesFree,
                          long largestFreeBlock, long allocations, long failures, long frees)
{
}
