package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;

/**
 * The completion engine of one QP: send completions in posting order ({@link CompletionOrder}), receive
 * completions, the first error that moves the QP to ERR, and the flush of what is queued with IBV_WC_WR_FLUSH_ERR
 * (IBA 9.9.3; rxe_comp.c).
 *
 * <p>Not thread safe: driven by the fabric's {@link NicEngine}.
 */
final class CompletionEngine
{
    private final SimQp qp;
    private final SimDevice device;

    CompletionEngine(final SimQp qp)
    {
        this.qp = qp;
        this.device = qp.device;
    }

    final CompletionOrder order = new CompletionOrder();

    /** The send queue's slots as a provider that frees them at poll time counts them. */
    final SendSlots slots = new SendSlots();

    /** The WQE whose end completeSend reports. */
    long currentSeq;

    boolean flushing;

    /**
     * The first error that moved this QP to ERR, named in the diagnoses of what it flushes (a {@link LazyText} when
     * its words are made only if read).
     */
    CharSequence errorCause;

    /** A WQE left the send queue: if it ended without a completion (unsignaled), it still takes its turn. */
    void settle(final SendWqe p)
    {
        if (!order.ended(p.seq()))
        {
            release(order.end(p.seq(), new CompletionOrder.End(p.wr(), null)));
        }
    }

    /** Reports the completions now due, in posting order. */
    void release(final List<CompletionOrder.End> due)
    {
        for (final CompletionOrder.End e : due)
        {
            final boolean lost = e.wc() != null && !qp.sendCq.push(e.wc());
            slots.ended(e.wc() != null && !lost);
            if (lost)
            {
                toError();
            }
        }
    }

    /** The QP went to RESET: its queued WQEs are dropped, none is waited for, and the send queue's slots are free. */
    void dropQueued()
    {
        order.dropAll();
        slots.reset(order.postedCount());
    }

    /**
     * @return the WQEs holding a slot of the send queue: with {@link ProviderRule#SEND_QUEUE_FREED_AT_POLL} those
     *         posted and not yet given back by a polled completion, else those the device has not finished.
     */
    int sendSlotsHeld()
    {
        return device.profile().follows(ProviderRule.SEND_QUEUE_FREED_AT_POLL) ? slots.held(order.postedCount())
            : qp.sendsWaiting();
    }

    void completeSend(final SendWr wr, final WcStatus status, final long byteLen)
    {
        completeSend(wr, status, byteLen, status == WcStatus.WR_FLUSH_ERR ? Diagnoser.flushed(qp, wr.wrId(),
            errorCause) : null);
    }

    void completeSend(final SendWr wr, final WcStatus status, final long byteLen, final WcDiagnosis why)
    {
        // A completion means every byte the work request wrote is visible (ibv_reg_mr(3), RELAXED_ORDERING).
        final SimQp target = qp.requester.peer();
        if (target != null)
        {
            target.device.writeOrdering().drain();
        }
        device.writeOrdering().drain();
        if (status == WcStatus.WR_FLUSH_ERR)
        {
            device.count(SimCounter.REQ_CQE_FLUSH_ERROR, 1);
        }
        else if (status != WcStatus.SUCCESS)
        {
            device.count(SimCounter.REQ_CQE_ERROR, 1);
        }
        noteError(status, wr.wrId(), why);
        HwCounters.sendCompleted(device, wr.opcode(), status);
        final WorkCompletion wc = new WorkCompletion(wr.wrId(), status, wr.opcode().completion(), qp.num, byteLen,
            false,
            0, false, 0, status == WcStatus.SUCCESS ? 0 : Diagnoser.vendorErr(device.profile(), status), why);
        final long seq = currentSeq;
        if (status != WcStatus.SUCCESS && status != WcStatus.WR_FLUSH_ERR)
        {
            // Younger WQEs that ended while this one was outstanding never report success: the QP is in error
            // before their turn comes, so they complete flushed.
            for (final java.util.Map.Entry<Long, CompletionOrder.End> e : order.heldAfter(seq))
            {
                device.count(SimCounter.REQ_CQE_FLUSH_ERROR, 1);
                final SendWr younger = e.getValue().wr();
                order.replace(e.getKey(), new CompletionOrder.End(younger, new WorkCompletion(younger.wrId(),
                    WcStatus.WR_FLUSH_ERR, younger.opcode().completion(), qp.num, 0, false, 0, false, 0,
                    Diagnoser.vendorErr(device.profile(), WcStatus.WR_FLUSH_ERR), Diagnoser.flushed(qp,
                    younger.wrId(), errorCause))));
            }
        }
        release(order.end(seq, new CompletionOrder.End(wr, wc)));
    }

    void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm)
    {
        completeRecv(wr, status, opcode, byteLen, withImm, imm, false, 0);
    }

    void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm, final boolean withInv, final int invalidatedRkey)
    {
        completeRecv(wr, status, opcode, byteLen, withImm, imm, withInv, invalidatedRkey,
            status == WcStatus.WR_FLUSH_ERR ? Diagnoser.flushed(qp, wr.wrId(), errorCause) : null);
    }

    void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm, final boolean withInv, final int invalidatedRkey, final WcDiagnosis why)
    {
        completeRecv(wr, status, opcode, byteLen, withImm, imm, withInv, invalidatedRkey, why, null);
    }

    /** As above; a datagram's receive also names its sender ({@link Datagrams#received}). */
    void completeRecv(final RecvWr wr, final WcStatus status, final WcOpcode opcode, final long byteLen,
        final boolean withImm, final int imm, final boolean withInv, final int invalidatedRkey, final WcDiagnosis why,
        final SimQp datagramSender)
    {
        device.writeOrdering().drain();
        if (status == WcStatus.WR_FLUSH_ERR)
        {
            device.count(SimCounter.RESP_CQE_FLUSH_ERROR, 1);
        }
        else if (status != WcStatus.SUCCESS)
        {
            device.count(SimCounter.RESP_CQE_ERROR, 1);
        }
        noteError(status, wr.wrId(), why);
        if (status == WcStatus.SUCCESS)
        {
            device.count(SimCounter.RECVS_COMPLETED, 1);
        }
        final WorkCompletion wc = new WorkCompletion(wr.wrId(), status, opcode, qp.num, byteLen, withImm, imm, withInv,
            invalidatedRkey, status == WcStatus.SUCCESS ? 0 : Diagnoser.vendorErr(device.profile(), status),
            Diagnoser.withStatus(why, status));
        if (!qp.recvCq.push(datagramSender == null ? wc : Datagrams.received(wc, datagramSender.num)))
        {
            toError();
        }
    }

    /** Remembers the first error completion while the QP is not yet in ERR, for the diagnoses of what it flushes. */
    void noteError(final WcStatus status, final long wrId, final WcDiagnosis why)
    {
        if (status != WcStatus.SUCCESS && status != WcStatus.WR_FLUSH_ERR && qp.state != QpState.ERR)
        {
            errorCause = new LazyText(() -> "wr_id " + Long.toUnsignedString(wrId) + " completed with " + status.cName() + (why == null ? ""
                : ": " + why.summary()));
        }
    }

    /**
     * Moves the QP to ERR: queued work requests (but the one executing, which completes with its own status) and
     * posted receives complete with WR_FLUSH_ERR, and a peer waiting on this QP for a receive is woken so that
     * its send fails instead of waiting forever.
     */
    void toError()
    {
        final boolean entering = qp.state != QpState.ERR;
        qp.state = QpState.ERR;
        if (flushing)
        {
            return;
        }
        flushing = true;
        try
        {
            qp.requester.flushSends();
            while (qp.ownsRecvQueue() && !qp.recvQueue.isEmpty())
            {
                completeRecv(qp.recvQueue.removeFirst(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
            }
        }
        finally
        {
            flushing = false;
        }
        if (entering)
        {
            AsyncEventQueue.enteredError(qp);
        }
        qp.wakeWaitingPeer();
    }
}
