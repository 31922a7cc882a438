package dev.rnicsim.verbs;

/**
 * What {@code ibv_alloc_dm} takes ({@code struct ibv_alloc_dm_attr}, ibv_alloc_dm(3)).
 *
 * @param lengthBytes the device memory's length in bytes.
 * @param logAlignReq {@code log_align_req}: the log2 of the alignment asked for (0: none).
 * @param compMask    {@code comp_mask}: extension fields given; no bit is defined, so any but 0 is refused by the
 *                    provider.
 */
public record DmAttr(long lengthBytes, int logAlignReq, int compMask)
{
    /**
     * @param lengthBytes the length.
     * @return attributes of that length, no alignment asked, comp_mask 0.
     */
    public static DmAttr of(final long lengthBytes)
    {
        return new DmAttr(lengthBytes, 0, 0);
    }
}
