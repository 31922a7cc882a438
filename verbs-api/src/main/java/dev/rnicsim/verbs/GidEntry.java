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
 * The entry's {@code gid_type} and {@code ndev_ifindex} are not modelled.
 */
public record GidEntry(int portNum, int gidIndex, byte[] gid)
{
    /** Copies the GID so later changes by the caller do not reach it. */
    public GidEntry
    {
        gid = gid.clone();
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
            && java.util.Arrays.equals(e.gid, gid);
    }

    @Override
    public int hashCode()
    {
        return java.util.Objects.hash(portNum, gidIndex, java.util.Arrays.hashCode(gid));
    }

    @Override
    public String toString()
    {
        return "GidEntry[port " + portNum + " index " + gidIndex + "]";
    }
}
