package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpAttr;

/**
 * INIT → RTR as a program's {@code ibv_modify_qp} asks it (through the library): the one-call transition's
 * attributes ({@link SimQp#modifyToRtr}) with the program's own path_mtu and source GID index, which decide the
 * packets' size and RoCE type ({@link RoceWire}).
 *
 * <p>Stateless.
 */
public final class ProgramRtr
{
    private ProgramRtr()
    {
    }

    /**
     * @param qp              the QP, in INIT.
     * @param remoteAddress   the peer's address.
     * @param minRnrTimerCode the RNR timer code.
     * @param pathMtu         the program's path_mtu (enum ibv_mtu), or 0 when it gave none.
     * @param sgidIndex       the program's {@code ah_attr.grh.sgid_index}, or -1 when its address vector has no GRH.
     */
    public static void modifyToRtr(final SimQp qp, final QpAddress remoteAddress, final int minRnrTimerCode,
        final int pathMtu, final int sgidIndex)
    {
        final QpAttr.Builder b = rtrAttrs(qp, remoteAddress, minRnrTimerCode, pathMtu, sgidIndex);
        qp.modify(b.build(), b.mask());
    }

    /** @return the attributes {@link #modifyToRtr} gives {@code ibv_modify_qp}. */
    static QpAttr.Builder rtrAttrs(final SimQp qp, final QpAddress remoteAddress, final int minRnrTimerCode,
        final int pathMtu, final int sgidIndex)
    {
        final QpAttr.Builder b = QpTransitionAttrs.toRtr(qp, remoteAddress, minRnrTimerCode);
        if (pathMtu > 0)
        {
            b.pathMtu(pathMtu);
        }
        if (sgidIndex >= 0 && remoteAddress != null)
        {
            b.av(new AhAttr(remoteAddress.gid(), remoteAddress.lid(), 1, sgidIndex));
        }
        return b;
    }

    /**
     * Checks a source GID index as {@code ibv_modify_qp} checks an address vector's before a transition is made, so a
     * caller about to take a QP through several transitions (a script's {@code connect}) refuses a bad index before
     * the first: EINVAL outside {@code gid_tbl_len} (uverbs {@code modify_qp}'s address vector checks,
     * {@link QpAttributes#ahRefusal}), ENODATA for an empty entry ({@code rdma_fill_sgid_attr},
     * {@code rdma_get_gid_attr}). Changes nothing.
     *
     * @param qp        the QP.
     * @param sgidIndex the source GID index its address vector is to leave from (port 1).
     * @throws dev.rnicsim.verbs.VerbsException EINVAL or ENODATA, as {@code ibv_modify_qp} to RTR would answer.
     */
    public static void checkSgidIndex(final SimQp qp, final int sgidIndex)
    {
        qp.checkOpen("ibv_modify_qp");
        final AhAttr av = new AhAttr(qp.device.gid(), 0, 1, sgidIndex);
        final String bad = QpAttributes.ahRefusal(qp.device, av);
        if (bad != null)
        {
            throw Errors.invalid("ibv_modify_qp", "QP 0x" + Integer.toHexString(qp.num) + ": " + bad
                + "; fix that attribute (ibv_modify_qp(3)); nothing changed");
        }
        final int valid = QpAttributes.emptySgidValidEntries(qp.device, av);
        if (valid >= 0)
        {
            throw QpModifyCheck.emptySgid("ibv_modify_qp", qp, av, valid);
        }
    }
}
