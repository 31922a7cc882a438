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
     * {@code ibv_modify_qp}: the transition must be in the kernel's table with the mask it requires and allows
     * ({@link QpTransitions}, {@code ib_modify_qp_is_ok}), the values must fit ({@link QpAttributes#valueRefusal});
     * a refusal is EINVAL and changes nothing. To RESET: queued work requests and receives are dropped without
     * completions and the attributes are cleared. To ERR: they complete with IBV_WC_WR_FLUSH_ERR. To SQD: the send
     * queue stops taking new work requests once the message in flight is done (IBA 10.3.1); back to RTS it goes on.
     */
    static void modify(final SimQp qp, final QpAttr attr, final Set<QpAttrMask> mask)
    {
        final String verb = "ibv_modify_qp";
        qp.checkOpen(verb);
        // An EnumSet cannot hold null (and is what callers pass): only other sets are searched for one.
        if (attr == null || mask == null
            || !(mask instanceof java.util.EnumSet) && mask.stream().anyMatch(java.util.Objects::isNull))
        {
            throw Errors.invalid(verb, "attr and attr_mask must be given, without null elements");
        }
        final QpState cur = mask.contains(QpAttrMask.CUR_STATE) ? attr.curQpState() : qp.state;
        final QpState next = mask.contains(QpAttrMask.STATE) ? attr.qpState() : cur;
        if (cur == null || next == null)
        {
            throw Errors.invalid(verb, "qp_state or cur_qp_state is null; give the state with "
                + "IBV_QP_STATE in attr_mask");
        }
        final String refused = QpTransitions.refusal(qp.type, cur, next, mask);
        if (refused != null)
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(qp.num) + " (" + qp.type + ", in " + qp.state
                + "): "
                + refused + " (ib_modify_qp_is_ok); give exactly the attributes that transition takes; nothing "
                + "changed");
        }
        final String bad = QpAttributes.valueRefusal(qp.device, attr, mask);
        if (bad != null)
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(qp.num) + ": " + bad
                + "; fix that attribute (ibv_modify_qp(3)); nothing changed");
        }
        apply(qp, attr, mask);
        if (next == QpState.RESET)
        {
            reset(qp);
        }
        else if (next == QpState.ERR)
        {
            if (qp.state != QpState.ERR)
            {
                final String origin = qp.device.fabric().origin();
                qp.completions.errorCause = "ibv_modify_qp to ERR" + (origin == null ? "" : " (" + origin + ")");
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

    private static void apply(final SimQp qp, final QpAttr a, final Set<QpAttrMask> mask)
    {
        if (mask.contains(QpAttrMask.ACCESS_FLAGS))
        {
            qp.qpAccessBits = Access.toBits(a.qpAccessFlags());
        }
        for (final QpAttrMask m : mask)
        {
            switch (m)
            {
                case PKEY_INDEX -> qp.attrs.pkeyIndex = a.pkeyIndex();
                case PORT -> qp.attrs.portNum = a.portNum();
                case QKEY -> qp.attrs.qkey = a.qkey();
                case AV -> qp.attrs.av = a.ahAttr();
                case PATH_MTU -> qp.attrs.pathMtu = a.pathMtu();
                case TIMEOUT -> qp.attrs.timeout = a.timeout();
                case RQ_PSN -> qp.attrs.rqPsn = a.rqPsn();
                case SQ_PSN -> qp.attrs.sqPsn = a.sqPsn();
                case MAX_QP_RD_ATOMIC -> qp.attrs.maxRdAtomic = a.maxRdAtomic();
                case MAX_DEST_RD_ATOMIC -> qp.attrs.maxDestRdAtomic = a.maxDestRdAtomic();
                case DEST_QPN -> qp.attrs.destQpNum = a.destQpNum();
                case MIN_RNR_TIMER -> qp.minRnrTimer = a.minRnrTimer();
                case RETRY_CNT -> qp.retryCount = a.retryCnt();
                case RNR_RETRY -> qp.rnrRetry = a.rnrRetry();
                default ->
                {
                }
            }
        }
        if ((mask.contains(QpAttrMask.AV) || mask.contains(QpAttrMask.DEST_QPN)) && qp.attrs.av != null
            && QpAttributes.connected(qp.type))
        {
            // The connection the engine follows: the remote port's GID and the remote QP number.
            qp.remote = new QpAddress(qp.attrs.av.dlid(), qp.attrs.av.dgid() == null ? "" : qp.attrs.av.dgid(),
                qp.attrs.destQpNum,
                qp.attrs.rqPsn);
        }
    }

    /**
     * To RESET: what was queued is dropped without completions; where the provider cleans the CQs
     * ({@link ProviderRule#RESET_CLEANS_CQ}: mlx4, mlx5), the QP's completions not yet polled go too.
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
        if (qp.ownsRecvQueue())
        {
            qp.recvQueue.clear();
        }
        qp.attrs.clear();
        qp.qpAccessBits = 0;
        qp.remote = null;
        qp.minRnrTimer = 0;
        qp.retryCount = 0;
        qp.rnrRetry = 0;
        qp.completions.errorCause = null;
        qp.state = QpState.RESET;
        AsyncEventQueue.reset(qp);
        // A sender waiting (RNR) for a receive here runs again and finds the QP gone from RTR/RTS.
        qp.wakeWaitingPeer();
    }
}
