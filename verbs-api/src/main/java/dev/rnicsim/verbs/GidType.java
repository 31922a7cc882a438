package dev.rnicsim.verbs;

/**
 * The type of a GID table entry ({@code enum ibv_gid_type} of {@code struct ibv_gid_entry}, what
 * {@code ibv_query_gid_ex} and {@code ibv_query_gid_table} report): an InfiniBand GID, or on a RoCE port the
 * encapsulation the entry's packets use. The kernel names the same types in sysfs
 * ({@code ports/N/gid_attrs/types/INDEX}: "IB/RoCE v1", "RoCE v2"), which {@code ibv_query_gid_type} and
 * {@code ibv_devinfo -v} read.
 */
public enum GidType
{
    /** IBV_GID_TYPE_IB: an InfiniBand port's GID (and an iWARP port's, which has no RoCE type). */
    IB(0),
    /** IBV_GID_TYPE_ROCE_V1: RoCE v1, IB transport over Ethernet (Ethertype 0x8915), not routable. */
    ROCE_V1(1),
    /** IBV_GID_TYPE_ROCE_V2: RoCE v2, IB transport over UDP port 4791, routable over IPv4 or IPv6. */
    ROCE_V2(2);

    private final int code;

    GidType(final int code)
    {
        this.code = code;
    }

    /**
     * @return the value of {@code enum ibv_gid_type}.
     */
    public int code()
    {
        return code;
    }

    /**
     * @return the kernel's sysfs name of the type ({@code gid_attrs/types}): "IB/RoCE v1" for IB and RoCE v1,
     *         "RoCE v2".
     */
    public String sysfsName()
    {
        return this == ROCE_V2 ? "RoCE v2" : "IB/RoCE v1";
    }
}
