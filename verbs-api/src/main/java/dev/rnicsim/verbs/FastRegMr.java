package dev.rnicsim.verbs;

/**
 * An MR for fast registration ({@code ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_num_sg)} in the kernel verbs that
 * storage and file-system initiators use): allocated with MTT room for {@code maxNumSg} pages and no mapping; each
 * use maps pages ({@link #mapSg}), registers them with a REG_MR work request under a new key byte
 * ({@code ib_update_fast_reg_key}), and is undone by LOCAL_INV or a received SEND_WITH_INV. States: INVALID (rxe's
 * FREE) until a REG_MR completes, then VALID until invalidated.
 */
public interface FastRegMr extends MemoryRegion
{
    /**
     * @return the most pages one registration may map.
     */
    int maxNumSg();

    /**
     * {@code ib_map_mr_sg}: sets the pages the next REG_MR maps: the 4 KiB pages of {@code [addr, addr +
     * lengthBytes)}, which must be mapped in the process (they are pinned until the next mapSg or close). The MR's
     * iova becomes {@code addr}.
     *
     * @param addr        first byte.
     * @param lengthBytes bytes, at least 1.
     * @return the pages mapped.
     * @throws VerbsException EINVAL when the MR is VALID (invalidate first), the length is not positive, or the pages
     *                        exceed {@link #maxNumSg()}; EFAULT when a page is not mapped; ENOMEM as ibv_reg_mr for
     *                        RLIMIT_MEMLOCK.
     */
    int mapSg(long addr, long lengthBytes);

    /**
     * @return true between a successful REG_MR and the next invalidation.
     */
    boolean isValid();
}
