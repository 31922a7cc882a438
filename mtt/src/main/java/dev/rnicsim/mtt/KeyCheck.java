package dev.rnicsim.mtt;

/**
 * The outcome of checking a key for an access, in the order rxe's responder checks them ({@code lookup_mr}, then
 * {@code mr_check_range}): index, all 32 bits of the key, PD, rights, state, range. Not an exception: a bad key on
 * the data path is an expected outcome that becomes a work-completion status.
 *
 * <p>Immutable and thread safe.
 */
public enum KeyCheck
{
    /** The key names a live entry, matches it in all 32 bits, and the access is allowed. */
    VALID,
    /** No live entry has the key's index (never allocated, or freed). */
    NO_SUCH_INDEX,
    /** The index is live but its variant differs: a stale key from an earlier registration of the index. */
    VARIANT_MISMATCH,
    /** The entry belongs to another protection domain. */
    WRONG_PD,
    /** The entry lacks an access right the operation needs. */
    RIGHTS_MISSING,
    /** The entry is not VALID. */
    WRONG_STATE,
    /** The accessed range is not inside {@code [iova, iova + length)} of the entry. */
    OUT_OF_RANGE,
    /** The key checks passed but the MTT entry of the page is not present (zapped): the device has no
     * translation for it. */
    NOT_PRESENT,
    /** The key names a type 2 memory window bound to another QP (rxe_lookup_mw: {@code mw->qp != qp}). */
    WRONG_QP;

    private static final KeyCheck[] VALUES = values();

    /**
     * @return the negative code {@link AdapterTables#translate} returns for this outcome (-1 for NO_SUCH_INDEX,
     * -2 for VARIANT_MISMATCH, ...); not defined for VALID.
     */
    public long code()
    {
        return -ordinal();
    }

    /**
     * @param result a value returned by {@link AdapterTables#translate}.
     * @return VALID for a DMA address (0 or more), else the failed check.
     */
    public static KeyCheck ofTranslation(final long result)
    {
        return result >= 0 ? VALID : VALUES[(int)-result];
    }
}
