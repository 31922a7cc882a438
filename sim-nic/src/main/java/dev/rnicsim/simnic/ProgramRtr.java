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
        final QpAttr.Builder b = QpTransitionAttrs.toRtr(qp, remoteAddress, minRnrTimerCode);
        if (pathMtu > 0)
        {
            b.pathMtu(pathMtu);
        }
        if (sgidIndex >= 0 && remoteAddress != null)
        {
            b.av(new AhAttr(remoteAddress.gid(), remoteAddress.lid(), 1, sgidIndex));
        }
        qp.modify(b.build(), b.mask());
    }
}
