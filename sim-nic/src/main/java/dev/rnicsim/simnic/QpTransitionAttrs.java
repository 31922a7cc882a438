package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.Set;

/**
 * The attributes of a {@link SimQp}'s one-call transitions ({@code modifyToInit}, {@code modifyToRtr},
 * {@code modifyToRts}, each then applied by {@link QpModify#modify}) and of {@code ibv_query_qp}.
 */
final class QpTransitionAttrs
{
    private QpTransitionAttrs()
    {
    }

    /**
     * The attributes of RESET → INIT: port 1, P_Key index 0 and these rights (and Q_Key 0 on UD, where rights are not
     * taken).
     *
     * @throws VerbsException EINVAL when the rights are null or hold null.
     */
    static QpAttr.Builder toInit(final SimQp qp, final Set<Access> qpAccessFlags)
    {
        if (qpAccessFlags == null || !(qpAccessFlags instanceof EnumSet)
            && NullElements.any(qpAccessFlags))
        {
            qp.checkOpen("ibv_modify_qp");
            throw Errors.invalid("ibv_modify_qp", "qp_access_flags is null or holds null (use an empty set for none)");
        }
        final QpAttr.Builder b = QpAttr.builder().state(QpState.INIT).pkeyIndex(0).port(1);
        if (qp.type == QpType.UD)
        {
            b.qkey(0);
            if (!qpAccessFlags.isEmpty())
            {
                b.accessFlags(qpAccessFlags);
            }
        }
        else
        {
            b.accessFlags(qpAccessFlags);
        }
        return b;
    }

    /**
     * The attributes of INIT → RTR the QP type requires: for RC and UC the remote port, QP number and PSN, the source
     * GID the connection manager picks ({@link GidTable#connectionManagerSgidIndex}: RoCE v2 where the port has it)
     * and the fabric's path MTU, at most both ports' active_mtu ({@link RoceWire#connectPathMtu}); for RC also the
     * deepest responder read/atomic queue the device offers and the RNR timer.
     *
     * @throws VerbsException EINVAL when the QP is destroyed or a connected QP is given no remote address.
     */
    static QpAttr.Builder toRtr(final SimQp qp, final QpAddress remoteAddress, final int minRnrTimerCode)
    {
        qp.checkOpen("ibv_modify_qp");
        if (remoteAddress == null && qp.type != QpType.UD)
        {
            throw Errors.invalid("ibv_modify_qp", "the remote QP's address is null"
                + "; give the peer QP's address (GID and QP number)");
        }
        final QpAttr.Builder b = QpAttr.builder().state(QpState.RTR);
        if (qp.type != QpType.UD)
        {
            b.av(new AhAttr(remoteAddress.gid(), remoteAddress.lid(), 1,
                GidTable.connectionManagerSgidIndex(qp.device, 1)))
                .pathMtu(RoceWire.connectPathMtu(qp.device, qp.device.fabric().deviceByGid(remoteAddress.gid())))
                .destQpNum(remoteAddress.qpNum()).rqPsn(remoteAddress.psn() & 0xffffff);
        }
        if (qp.type == QpType.RC || qp.type == QpType.XRC_RECV)
        {
            b.maxDestRdAtomic(Math.min(16, qp.device.profile().attributes().maxQpRdAtom()))
                .minRnrTimer(minRnrTimerCode);
        }
        return b;
    }

    /**
     * The attributes of RTR → RTS: the QP's first PSN; RC adds its ACK timeout (14, about 67 ms), the retry counts
     * and the deepest initiator read/atomic queue the device offers.
     */
    static QpAttr.Builder toRts(final SimQp qp, final int retryCnt, final int rnrRetryCnt)
    {
        final QpAttr.Builder b = QpAttr.builder().state(QpState.RTS).sqPsn(qp.psn);
        if (qp.type == QpType.RC || qp.type == QpType.XRC_SEND)
        {
            b.timeout(14).retryCnt(retryCnt).rnrRetry(rnrRetryCnt)
                .maxRdAtomic(Math.min(16, qp.device.profile().attributes().maxQpInitRdAtom()));
        }
        else if (qp.type == QpType.XRC_RECV)
        {
            b.timeout(14);
        }
        return b;
    }

    /**
     * A one-call transition's attributes and the mask that gives them, for {@link QpModify#modify}: RC's three
     * transitions are made without a builder (an application's recovery makes them again and again), their masks
     * shared (modify only reads a mask); the other types' come from {@link #toInit}, {@link #toRtr} and
     * {@link #toRts}. The same attributes and masks either way.
     */
    record Transition(QpAttr attr, Set<QpAttrMask> mask)
    {
        private static Transition of(final QpAttr.Builder b)
        {
            return new Transition(b.build(), b.mask());
        }
    }

    private static final Set<QpAttrMask> RC_INIT = EnumSet.of(QpAttrMask.STATE, QpAttrMask.PKEY_INDEX,
        QpAttrMask.PORT, QpAttrMask.ACCESS_FLAGS);
    private static final Set<QpAttrMask> RC_RTR = EnumSet.of(QpAttrMask.STATE, QpAttrMask.AV, QpAttrMask.PATH_MTU,
        QpAttrMask.DEST_QPN, QpAttrMask.RQ_PSN, QpAttrMask.MAX_DEST_RD_ATOMIC, QpAttrMask.MIN_RNR_TIMER);
    private static final Set<QpAttrMask> RC_RTS = EnumSet.of(QpAttrMask.STATE, QpAttrMask.SQ_PSN, QpAttrMask.TIMEOUT,
        QpAttrMask.RETRY_CNT, QpAttrMask.RNR_RETRY, QpAttrMask.MAX_QP_RD_ATOMIC);

    /** {@link #toInit} as a {@link Transition}. */
    static Transition init(final SimQp qp, final Set<Access> qpAccessFlags)
    {
        if (qp.type != QpType.RC || qpAccessFlags == null || !(qpAccessFlags instanceof EnumSet))
        {
            return Transition.of(toInit(qp, qpAccessFlags));
        }
        return new Transition(new QpAttr(QpState.INIT, QpState.RESET, qpAccessFlags, 0, 1, 0, null, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0, false), RC_INIT);
    }

    /** {@link #toRtr} as a {@link Transition}. */
    static Transition rtr(final SimQp qp, final QpAddress remoteAddress, final int minRnrTimerCode)
    {
        if (qp.type != QpType.RC || remoteAddress == null)
        {
            return Transition.of(toRtr(qp, remoteAddress, minRnrTimerCode));
        }
        qp.checkOpen("ibv_modify_qp");
        final AhAttr av = new AhAttr(remoteAddress.gid(), remoteAddress.lid(), 1,
            GidTable.connectionManagerSgidIndex(qp.device, 1));
        final int pathMtu = RoceWire.connectPathMtu(qp.device, qp.device.fabric().deviceByGid(remoteAddress.gid()));
        return new Transition(new QpAttr(QpState.RTR, QpState.RESET, null, 0, 0, 0, av, pathMtu, 0, 0, 0,
            remoteAddress.psn() & 0xffffff, 0, 0, Math.min(16, qp.device.profile().attributes().maxQpRdAtom()),
            minRnrTimerCode, remoteAddress.qpNum(), false), RC_RTR);
    }

    /** {@link #toRts} as a {@link Transition}. */
    static Transition rts(final SimQp qp, final int retryCnt, final int rnrRetryCnt)
    {
        if (qp.type != QpType.RC)
        {
            return Transition.of(toRts(qp, retryCnt, rnrRetryCnt));
        }
        return new Transition(new QpAttr(QpState.RTS, QpState.RESET, null, 0, 0, 0, null, 0, 14, retryCnt,
            rnrRetryCnt, 0, qp.psn, Math.min(16, qp.device.profile().attributes().maxQpInitRdAtom()), 0, 0, 0, false),
            RC_RTS);
    }

    /**
     * {@code ibv_query_qp}: the attributes as the last transitions set them, the state as the device's provider
     * reports it ({@link ReportedQpState}).
     */
    static QpAttr query(final SimQp qp)
    {
        qp.checkOpen("ibv_query_qp");
        final QpState reported = ReportedQpState.of(qp.device.profile(), qp.state);
        final QpAttributes a = qp.attrs;
        return new QpAttr(reported, reported, Access.fromBits(qp.qpAccessBits), a.pkeyIndex, a.portNum, a.qkey, a.av,
            a.pathMtu, a.timeout, qp.retryCount, qp.rnrRetry, a.rqPsn, a.sqPsn, a.maxRdAtomic, a.maxDestRdAtomic,
            a.minRnrTimer, a.destQpNum, qp.state == QpState.SQD && !qp.requester.sendQueue.isEmpty());
    }
}
