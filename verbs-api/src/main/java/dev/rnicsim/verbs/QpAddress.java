package dev.rnicsim.verbs;

import java.util.Objects;

/**
 * What one side of a connection tells the other so that it can move its QP to RTR: the port's LID and GID, the QP
 * number and the first packet sequence number (the fields of {@code ibv_qp_attr} an RC connection exchanges out of
 * band).
 *
 * @param lid   port LID (0 on RoCE).
 * @param gid   port GID in its text form.
 * @param qpNum QP number (24 bits).
 * @param psn   first packet sequence number (24 bits).
 */
public record QpAddress(int lid, String gid, int qpNum, int psn)
{
    /**
     * @throws NullPointerException when gid is null.
     */
    public QpAddress
    {
        Objects.requireNonNull(gid, "gid");
    }
}
