package dev.rnicsim.mtt;

/**
 * The MTT entries given to one MR.
 *
 * <p>Immutable and thread safe.
 *
 * @param firstEntry     index of the first MTT entry.
 * @param entries        entries the MR asked for (its DMA blocks).
 * @param reservedEntries entries taken from the table: {@code entries} rounded up by the allocator (a power of
 *                       two and at least one segment for BUDDY; equal for EXACT).
 */
public record MttRange(long firstEntry, long entries, long reservedEntries)
{
}
