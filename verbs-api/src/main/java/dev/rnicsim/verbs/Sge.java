package dev.rnicsim.verbs;

/**
 * A scatter/gather element ({@code struct ibv_sge}): a local buffer named by address, length and the lkey of an
 * MR covering it.
 *
 * @param addr        first byte (for a ZERO_BASED MR: offset from the MR start).
 * @param lengthBytes length in bytes, 0 to 2^32-1 (uint32_t in C).
 * @param lkey        the local key of the MR.
 */
public record Sge(long addr, long lengthBytes, int lkey)
{
    /**
     * @throws IllegalArgumentException when lengthBytes does not fit uint32_t.
     */
    public Sge
    {
        if (lengthBytes < 0 || lengthBytes > 0xffff_ffffL)
        {
            throw new IllegalArgumentException("length=" + lengthBytes + " does not fit ibv_sge.length "
                + "(uint32_t, 0 to 4294967295)");
        }
    }

    /**
     * @param mr     the MR.
     * @param offset bytes from the MR's first byte.
     * @param lengthBytes length in bytes.
     * @return an SGE for {@code [mr.addr() + offset, + lengthBytes)} with the MR's lkey (offsets from the MR start
     * for a ZERO_BASED MR).
     */
    public static Sge of(final MemoryRegion mr, final long offset, final long lengthBytes)
    {
        return new Sge(mr.iova() + offset, lengthBytes, mr.lkey());
    }
}
