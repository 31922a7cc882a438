package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import java.util.Set;

/**
 * {@code ibv_modify_qp} on a simulated QP: the kernel's transition table, the attributes' values, then the change.
 */
final class QpModify
{
    private QpModify()
    {
    }

    /**
     * {@code ibv_modify_qp}: the transition must be in the kernel's table with the mask it requires and allows, and
     * the values must fit ({@link QpModifyCheck}); a refusal is EINVAL and changes nothing. Narrow fields are kept as
     * the driver keeps them ({@link QpAttrValues}: PSNs masked to 24 bits, mlx5's 3- and 5-bit fields masked). To RESET: queued work requests and receives are dropped without
     * completions and the attributes are cleared (kept on rxe, {@link ProviderRule#RESET_KEEPS_QP_ATTRS}). To ERR: they complete with IBV_WC_WR_FLUSH_ERR. To SQD: the send
     * queue stops taking new work requests once the message in flight is done (IBA 10.3.1); back to RTS it goes on.
     */
    static void modify(final SimQp qp, final QpAttr attr, final Set<QpAttrMask> mask)
    {
        final long bits = QpModifyCheck.checkHeld(qp, attr, mask);
        // without IBV_QP_STATE the QP stays where it is: IBV_QP_CUR_STATE only names the state the transition table
        // is checked from (rxe_qp_from_attr moves the state under IB_QP_STATE alone)
        final QpState next = (bits & 1L << QpAttrMask.STATE.ordinal()) != 0 ? attr.qpState() : qp.state;
        apply(qp, attr, bits);
        if (next == QpState.RESET)
        {
            reset(qp);
        }
        else if (next == QpState.ERR)
        {
            if (qp.state != QpState.ERR)
            {
                final String origin = qp.device.fabric().origin();
                qp.completions.errorCause = origin == null ? "ibv_modify_qp to ERR"
                    : new LazyText(() -> "ibv_modify_qp to ERR (" + origin + ")");
            }
            qp.completions.toError();
        }
        else
        {
            final boolean resumes = next == QpState.RTS && qp.state != QpState.RTS;
            qp.state = next;
            if (resumes && !qp.requester.sendQueue.isEmpty())
            {
                qp.engine().schedule(qp);
            }
        }
    }

    private static final QpAttrMask[] ATTRS = QpAttrMask.values();

    /** The bits of the qp_access_flags modify is given, the last of each size kept. */
    private static final EnumSetBits<Access> ACCESS_BITS = new EnumSetBits<>(Access.class, Access::toBits);

    /** Sets each attribute of the mask ({@link QpTransitions#bits}), in the mask's order. */
    private static void apply(final SimQp qp, final QpAttr a, final long bits)
    {
        if ((bits & 1L << QpAttrMask.ACCESS_FLAGS.ordinal()) != 0)
        {
            qp.qpAccessBits = (int)ACCESS_BITS.of(a.qpAccessFlags());
        }
        for (long left = bits; left != 0; left &= left - 1)
        {
            switch (ATTRS[Long.numberOfTrailingZeros(left)])
            {
                case PKEY_INDEX -> qp.attrs.pkeyIndex = a.pkeyIndex();
                case PORT -> qp.attrs.portNum = a.portNum();
                case QKEY -> qp.attrs.qkey = a.qkey();
                case AV -> qp.attrs.av = a.ahAttr();
                case PATH_MTU -> qp.attrs.pathMtu = a.pathMtu();
                case TIMEOUT -> qp.attrs.timeout = QpAttrValues.timeout(a.timeout());
                case RQ_PSN -> qp.attrs.rqPsn = QpAttrValues.psn(a.rqPsn());
                case SQ_PSN -> qp.attrs.sqPsn = QpAttrValues.psn(a.sqPsn());
                case MAX_QP_RD_ATOMIC -> qp.attrs.maxRdAtomic =
                    QpContextFields.rdAtomicDepthKept(qp.device.profile(), a.maxRdAtomic());
                case MAX_DEST_RD_ATOMIC -> qp.attrs.maxDestRdAtomic =
                    QpContextFields.rdAtomicDepthKept(qp.device.profile(), a.maxDestRdAtomic());
                case DEST_QPN -> qp.attrs.destQpNum = QpContextFields.destQpNumKept(qp.device.profile(), a.destQpNum());
                case MIN_RNR_TIMER ->
                {
                    qp.attrs.minRnrTimer = QpAttrValues.minRnrTimerKept(qp.device.profile(), a.minRnrTimer());
                    qp.minRnrTimer = QpAttrValues.minRnrTimerOnTheWire(a.minRnrTimer());
                }
                case RETRY_CNT -> qp.retryCount = QpAttrValues.retryCount(qp.device.profile(), a.retryCnt());
                case RNR_RETRY -> qp.rnrRetry = QpAttrValues.retryCount(qp.device.profile(), a.rnrRetry());
                default ->
                {
                }
            }
        }
        if ((bits & (1L << QpAttrMask.AV.ordinal() | 1L << QpAttrMask.DEST_QPN.ordinal())) != 0 && qp.attrs.av != null
            && QpAttributes.connected(qp.type))
        {
            // The connection the engine follows: the remote port's GID and the remote QP number.
            qp.remote = new QpAddress(qp.attrs.av.dlid(), qp.attrs.av.dgid() == null ? "" : qp.attrs.av.dgid(),
                QpContextFields.destQpNumOnTheWire(qp.attrs.destQpNum),
                qp.attrs.rqPsn);
        }
    }

    /**
     * To RESET: what was queued is dropped without completions; where the provider cleans the CQs
     * ({@link ProviderRule#RESET_CLEANS_CQ}: mlx4, mlx5, hns), the QP's completions not yet polled go too.
     */
    private static void reset(final SimQp qp)
    {
        if (qp.device.profile().follows(ProviderRule.RESET_CLEANS_CQ))
        {
            for (final SimCq cq : new SimCq[] {qp.recvCq, qp.sendCq})
            {
                if (cq != null)
                {
                    cq.removeCompletionsOf(qp.qpNum());
                }
            }
        }
        qp.requester.dropInflight();
        qp.engine().forget(qp);
        qp.requester.sendQueue.clear();
        qp.completions.dropQueued();
        if (qp.ownsRecvQueue())
        {
            qp.recvQueue.clear();
        }
        if (!qp.device.profile().follows(ProviderRule.RESET_KEEPS_QP_ATTRS))
        {
            qp.attrs.clear();
            qp.qpAccessBits = 0;
            qp.retryCount = 0;
            qp.rnrRetry = 0;
        }
        qp.remote = null;
        qp.minRnrTimer = 0;
        qp.completions.errorCause = null;
        qp.state = QpState.RESET;
        AsyncEventQueue.reset(qp);
        // A sender waiting (RNR) for a receive here runs again and finds the QP gone from RTR/RTS.
        qp.wakeWaitingPeer();
    }
}
