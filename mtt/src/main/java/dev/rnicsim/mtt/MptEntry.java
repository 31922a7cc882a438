package dev.rnicsim.mtt;

/**
 * A snapshot of one live MPT entry.
 *
 * <p>Immutable and thread safe.
 *
 * @param key          the entry's current 32-bit key.
 * @param state        INVALID or VALID.
 * @param pd           protection domain number.
 * @param iova         first address the MR is accessed by.
 * @param lengthBytes  length of the MR in bytes.
 * @param access       access-flag bits ({@link AccessFlags}).
 * @param pageShift    log2 of the MR page size.
 * @param mtt          the MTT range holding its translation.
 */
public record MptEntry(int key, MptState state, int pd, long iova, long lengthBytes, int access, int pageShift,
                       MttRange mtt)
{
}
