package dev.rnicsim.simnic;

/**
 * The entries a CQ is given for the {@code cqe} asked for, which {@code ibv_create_cq} and {@code ibv_resize_cq}
 * report back in {@code cq->cqe} (from the kernel's answer: {@code ib_uverbs_create_cq} returns {@code cq->cqe}, which
 * libibverbs' {@code ibv_cmd_create_cq} stores), and the completions it holds before it overflows. A profile property:
 * <ul>
 * <li>{@code roundup_pow_of_two(cqe + 1) - 1}: mlx4 ({@code mlx4_ib_create_cq}), mlx5 ({@code mlx5_ib_create_cq},
 * libmlx5 {@code align_queue_size(cqe + 1)}), rxe ({@code rxe_cq_from_init} through {@code rxe_queue_init}, which keeps
 * one slot of a power of two empty); assumed for the drivers not read (bnxt_re, irdma, efa, qedr, cxgb4, erdma, mana,
 * hfi1). 100 gives 127, 128 gives 255.</li>
 * <li>{@code roundup_pow_of_two(cqe)} ({@link ProviderRule#CQE_ROUNDED_TO_POW2}): siw's {@code siw_create_cq}. 100
 * gives 128, 128 gives 128.</li>
 * <li>{@code roundup_pow_of_two(max(cqe, 64)) - 1} ({@link ProviderRule#CQE_AT_LEAST_64}): libhns
 * {@code hns_roce_verify_cq} and the kernel's {@code set_cq_param}. 1 gives 63, 100 gives 127, 128 gives 127 (one less
 * than asked: the kernel reports the last index of a ring of 128; the model holds the count reported).</li>
 * </ul>
 * Stateless.
 */
final class CqDepth
{
    /** {@code HNS_ROCE_MIN_CQE_NUM}. */
    static final int HNS_MIN_CQE = 64;

    private CqDepth()
    {
    }

    /**
     * @param profile the device's profile.
     * @param cqe     the entries asked for, 1 to max_cqe (checked by the caller).
     * @return the entries the CQ reports and holds.
     */
    static int reported(final DeviceProfile profile, final int cqe)
    {
        if (profile.follows(ProviderRule.CQE_ROUNDED_TO_POW2))
        {
            return (int) Math.min(Integer.MAX_VALUE, QpCreation.pow2(cqe));
        }
        if (profile.follows(ProviderRule.CQE_AT_LEAST_64))
        {
            return (int) Math.min(Integer.MAX_VALUE, QpCreation.pow2(Math.max(cqe, HNS_MIN_CQE)) - 1);
        }
        return (int) Math.min(Integer.MAX_VALUE, QpCreation.pow2((long) cqe + 1) - 1);
    }

    /**
     * @param reported the entries a CQ reports ({@link #reported}).
     * @return the CQEs of its ring, a power of two with room for them (the CQ's pinned bytes are counted from it).
     */
    static long ringEntries(final int reported)
    {
        return QpCreation.pow2((long) reported + 1);
    }
}
