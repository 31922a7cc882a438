package dev.rnicsim.verbs;

/**
 * Memory window types ({@code enum ibv_mw_type}, ibv_alloc_mw(3)).
 */
public enum MwType
{
    /** IBV_MW_TYPE_1: bound with the ibv_bind_mw verb, to no QP; the library picks the new rkey (ibv_inc_rkey). */
    TYPE_1(1),
    /** IBV_MW_TYPE_2: bound by a posted BIND_MW work request to the QP that posted it; the consumer picks the key. */
    TYPE_2(2);

    private final int code;

    MwType(final int code)
    {
        this.code = code;
    }

    /**
     * @return the rdma-core value (1 or 2).
     */
    public int code()
    {
        return code;
    }
}
