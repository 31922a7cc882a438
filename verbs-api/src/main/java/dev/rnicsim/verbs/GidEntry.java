package dev.rnicsim.verbs;

/**
 * One valid entry of a device's GID tables ({@code struct ibv_gid_entry} of {@code ibv_query_gid_table} and
 * {@code ibv_query_gid_ex}).
 *
 * <p>Immutable.
 *
 * @param portNum  the port, from 1.
 * @param gidIndex the index in that port's table.
 * @param gid      the 16-byte GID (a copy is kept and returned).
 * @param gidType  the entry's {@code gid_type}: IB on an InfiniBand or iWARP port, RoCE v1 or v2 on a RoCE port.
 * The entry's {@code ndev_ifindex} is not modelled.
 */
public record GidEntry(int portNum, int gidIndex, byte[] gid, GidType gidType)
{
    /** Copies the GID so later changes by the caller do not reach it. */
    public GidEntry
    {
        gid = gid.clone();
        java.util.Objects.requireNonNull(gidType, "gidType");
    }

    /**
     * An entry of an InfiniBand port (type IB).
     *
     * @param portNum  the port, from 1.
     * @param gidIndex the index in that port's table.
     * @param gid      the 16-byte GID.
     */
    public GidEntry(final int portNum, final int gidIndex, final byte[] gid)
    {
        this(portNum, gidIndex, gid, GidType.IB);
    }

    @Override
    public byte[] gid()
    {
        return gid.clone();
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof GidEntry e && e.portNum == portNum && e.gidIndex == gidIndex
            && java.util.Arrays.equals(e.gid, gid) && e.gidType == gidType;
    }

    @Override
    public int hashCode()
    {
        return java.util.Objects.hash(portNum, gidIndex, java.util.Arrays.hashCode(gid), gidType);
    }

    @Override
    public String toString()
    {
        return "GidEntry[port " + portNum + " index " + gidIndex + " " + gidType + "]";
    }
}
