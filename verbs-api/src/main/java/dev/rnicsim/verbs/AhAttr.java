package dev.rnicsim.verbs;

/**
 * An address vector ({@code struct ibv_ah_attr}): the remote port a datagram or a connection goes to. On RoCE the
 * destination is a GID and the global route header is mandatory ({@code is_global}).
 *
 * @param dgid     the destination GID in its text form, or null for none (InfiniBand, routed by LID only).
 * @param dlid     the destination LID (0 on RoCE).
 * @param portNum  the local port, 1 to {@code phys_port_cnt}.
 * @param sgidIndex the local GID table entry the packets leave from.
 */
public record AhAttr(String dgid, int dlid, int portNum, int sgidIndex)
{
    /**
     * @param dgid the destination GID.
     * @return an address vector through port 1 from GID index 0.
     */
    public static AhAttr toGid(final String dgid)
    {
        return new AhAttr(dgid, 0, 1, 0);
    }

    /**
     * @return true when a global route header is given ({@code is_global}).
     */
    public boolean isGlobal()
    {
        return dgid != null;
    }
}
