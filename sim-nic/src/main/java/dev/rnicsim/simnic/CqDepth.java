package dev.rnicsim.simnic;

/**
 * The entries a CQ is given for the {@code cqe} asked for, which {@code ibv_create_cq} and {@code ibv_resize_cq}
 * report back in {@code cq->cqe} (from the kernel's answer: {@code ib_uverbs_create_cq} returns {@code cq->cqe}, which
 * libibverbs' {@code ibv_cmd_create_cq} stores, unless the provider sets it again), and the completions it holds
 * before it overflows. A profile property:
 * <ul>
 * <li>{@code roundup_pow_of_two(cqe + 1) - 1}: mlx4 ({@code mlx4_ib_create_cq}), mlx5 ({@code mlx5_ib_create_cq},
 * libmlx5 {@code align_queue_size(cqe + 1)}), rxe ({@code rxe_cq_from_init} through {@code rxe_queue_init}, which keeps
 * one slot of a power of two empty); assumed for the drivers not read (erdma, mana, hfi1). 100 gives 127, 128 gives
 * 255.</li>
 * <li>{@code roundup_pow_of_two(cqe)} ({@link ProviderRule#CQE_ROUNDED_TO_POW2}): siw's {@code siw_create_cq}, and
 * EFA, whose provider rounds before the kernel sees the count (libefa {@code efa_create_cq}; the kernel's
 * {@code efa_create_cq} reports the depth the device took, {@code result.actual_depth}). 100 gives 128, 128 gives
 * 128. On EFA the rounded count must not pass {@code max_cqe} ({@link ProviderRule#CQE_ROUNDED_COUNT_CHECKED},
 * {@link #check}); siw checks the count before it rounds it ({@code SIW_MAX_CQE}).</li>
 * <li>{@code roundup_pow_of_two(max(cqe, 64)) - 1} ({@link ProviderRule#CQE_AT_LEAST_64}): libhns
 * {@code hns_roce_verify_cq} and the kernel's {@code set_cq_param}. 1 gives 63, 100 gives 127, 128 gives 127: the
 * kernel reports the last index of a ring of 128, which holds 128 ({@link ProviderRule#CQ_HOLDS_ONE_MORE_THAN_REPORTED},
 * {@link #held}).</li>
 * <li>the count asked for ({@link ProviderRule#CQE_AS_ASKED}): libirdma's {@code ucreate_cq}, whose larger ring (for
 * completions with immediate data) it does not report.</li>
 * <li>{@code roundup_pow_of_two(cqe + 1)}, at most {@code max_cqe + 1} ({@link
 * ProviderRule#CQE_POW2_OF_COUNT_PLUS_ONE}): bnxt_re's {@code bnxt_re_create_cq}. 100 gives 128, 128 gives 256.</li>
 * <li>{@code cqe + 2} rounded up to 16, less 2 ({@link ProviderRule#CQE_MULTIPLE_OF_16_LESS_TWO}): cxgb4's
 * {@code c4iw_create_cq}. 100 gives 110, 128 gives 142.</li>
 * <li>the 32-byte CQEs of the 4 KiB pages {@code cqe + 1} CQEs fill, at most {@code max_cqe} ({@link
 * ProviderRule#CQE_PAGES_OF_32_BYTE_ENTRIES}): qedr's {@code qedr_create_cq} ({@code qedr_align_cq_entries}). 100 gives
 * 128, 128 gives 256.</li>
 * </ul>
 * Stateless.
 */
final class CqDepth
{
    /** {@code HNS_ROCE_MIN_CQE_NUM}. */
    static final int HNS_MIN_CQE = 64;
    /** cxgb4's CQ entries are a multiple of 16 ({@code c4iw_create_cq}: "entries must be multiple of 16 for HW"). */
    static final int CXGB4_CQ_ENTRY_MULTIPLE = 16;
    /** cxgb4's entries beyond the count: the status page's and the one that tells a full queue from an empty one. */
    static final int CXGB4_CQ_EXTRA_ENTRIES = 2;
    /** {@code QEDR_CQE_SIZE}: a qedr CQE, {@code union rdma_cqe}. */
    static final int QEDR_CQE_BYTES = 32;
    /** The page qedr aligns a CQ's chain to ({@code PAGE_SIZE} of a 4 KiB-page host). */
    static final int QEDR_PAGE_BYTES = 4096;

    private CqDepth()
    {
    }

    /**
     * @param profile the device's profile.
     * @param cqe     the entries asked for, 1 to max_cqe (checked by the caller).
     * @return the entries the CQ reports.
     */
    static int reported(final DeviceProfile profile, final int cqe)
    {
        final long maxCqe = profile.attributes().maxCqe();
        final long n;
        if (profile.follows(ProviderRule.CQE_AS_ASKED))
        {
            n = cqe;
        }
        else if (profile.follows(ProviderRule.CQE_ROUNDED_TO_POW2))
        {
            n = QpCreation.pow2(cqe);
        }
        else if (profile.follows(ProviderRule.CQE_AT_LEAST_64))
        {
            n = QpCreation.pow2(Math.max(cqe, HNS_MIN_CQE)) - 1;
        }
        else if (profile.follows(ProviderRule.CQE_POW2_OF_COUNT_PLUS_ONE))
        {
            n = Math.min(QpCreation.pow2((long) cqe + 1), maxCqe + 1);
        }
        else if (profile.follows(ProviderRule.CQE_MULTIPLE_OF_16_LESS_TWO))
        {
            n = roundUp((long) cqe + CXGB4_CQ_EXTRA_ENTRIES, CXGB4_CQ_ENTRY_MULTIPLE) - CXGB4_CQ_EXTRA_ENTRIES;
        }
        else if (profile.follows(ProviderRule.CQE_PAGES_OF_32_BYTE_ENTRIES))
        {
            n = Math.min(roundUp(((long) cqe + 1) * QEDR_CQE_BYTES, QEDR_PAGE_BYTES) / QEDR_CQE_BYTES, maxCqe);
        }
        else
        {
            n = QpCreation.pow2((long) cqe + 1) - 1;
        }
        return (int) Math.min(Integer.MAX_VALUE, n);
    }

    /**
     * @param profile  the device's profile.
     * @param reported the entries the CQ reports ({@link #reported}).
     * @return the completions the CQ holds before it overflows: one more than it reports where the profile follows
     * {@link ProviderRule#CQ_HOLDS_ONE_MORE_THAN_REPORTED} (hns: the ring of {@code cq_depth} reported as
     * {@code cq_depth - 1}), else what it reports.
     */
    static int held(final DeviceProfile profile, final int reported)
    {
        return profile.follows(ProviderRule.CQ_HOLDS_ONE_MORE_THAN_REPORTED)
            ? (int) Math.min(Integer.MAX_VALUE, (long) reported + 1) : reported;
    }

    /**
     * Refuses a count whose rounded size the driver does not take, where the profile follows {@link
     * ProviderRule#CQE_ROUNDED_COUNT_CHECKED}: libefa rounds {@code cqe} up to a power of two and the kernel's
     * {@code efa_create_cq} answers EINVAL for more entries than {@code max_cq_depth} (max_cqe).
     *
     * @param verb    the verb, for the message.
     * @param profile the device's profile.
     * @param cqe     the entries asked for, 1 to max_cqe.
     */
    static void check(final String verb, final DeviceProfile profile, final int cqe)
    {
        if (!profile.follows(ProviderRule.CQE_ROUNDED_COUNT_CHECKED))
        {
            return;
        }
        final int maxCqe = profile.attributes().maxCqe();
        final long rounded = QpCreation.pow2(cqe);
        if (rounded > maxCqe)
        {
            throw Errors.invalid(verb, "cqe=" + cqe + " is rounded up to a power of two, " + rounded + " entries, "
                + "more than max_cqe=" + maxCqe + " (" + profile.driver() + ": the provider rounds the count before "
                + "the kernel's create_cq checks it against max_cq_depth, libefa efa_create_cq and efa_create_cq); "
                + "ask for at most " + Long.highestOneBit(maxCqe) + " entries; nothing created");
        }
    }

    /**
     * @param reported the entries a CQ reports ({@link #reported}).
     * @return the CQEs of its ring, a power of two with room for them (the CQ's pinned bytes are counted from it).
     */
    static long ringEntries(final int reported)
    {
        return QpCreation.pow2((long) reported + 1);
    }

    private static long roundUp(final long n, final long to)
    {
        return (n + to - 1) / to * to;
    }
}
