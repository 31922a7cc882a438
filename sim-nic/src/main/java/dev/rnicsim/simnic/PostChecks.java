package dev.rnicsim.simnic;

import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WrOpcode;
import java.util.Set;

/**
 * The checks {@code ibv_post_send}, {@code ibv_bind_mw} and {@code ibv_post_recv} make before a work request reaches
 * the device (a refused one changes nothing).
 */
final class PostChecks
{
    private PostChecks()
    {
    }

    /** The checks ibv_post_send makes before the work request reaches the device; returns the inline payload. */
    static byte[] checkSend(final SimQp qp, final SendWr wr, final int i)
    {
        final String verb = "ibv_post_send";
        if (qp.closed)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "the QP is destroyed"
                + " (ibv_destroy_qp released it); create a new QP");
        }
        if (qp.state == QpState.RESET || qp.state == QpState.INIT || qp.state == QpState.RTR)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "QP 0x" + Integer.toHexString(qp.num) + " is in "
                + qp.state + "; sends need RTS"
                + "; modify the QP to RTS (INIT, RTR, RTS) before posting sends");
        }
        final PostException noSendQueue = XrcRules.sendRefusal(qp, i);
        if (noSendQueue != null)
        {
            throw noSendQueue;
        }
        final String opcodeRefused = Datagrams.opcodeRefusal(qp.device.profile(), qp.type, wr.opcode());
        if (opcodeRefused != null)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, opcodeRefused);
        }
        if (wr.sgList().size() > qp.cap.maxSendSge())
        {
            // mlx5 _mlx5_post_send: ENOMEM ("max gs exceeded"); rxe validate_send_wr: EINVAL.
            final boolean enomem = qp.device.profile().follows(ProviderRule.SEND_SGE_OVERFLOW_ENOMEM);
            throw new PostException(verb, (enomem ? Errno.ENOMEM : Errno.EINVAL).code(), i, "num_sge="
                + wr.sgList().size() + " > max_send_sge=" + qp.cap.maxSendSge() + (enomem ? " (mlx5_post_send answers "
                + "ENOMEM)" : "") + "; use fewer SGEs or create the QP with a larger max_send_sge");
        }
        final DeviceAttributes a = qp.device.profile().attributes();
        switch (wr.opcode())
        {
            case BIND_MW ->
            {
                if (!(wr.localOp() instanceof SendWr.Bind b) || !(b.mw() instanceof SimMw mw)
                    || mw.pd().context().device() != qp.device)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "BIND_MW needs SendWr.bindMw with a "
                        + "window of this device");
                }
                if (mw.type() == MwType.TYPE_1 && !qp.bindingType1)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "type 1 windows are bound with "
                        + "ibv_bind_mw (QueuePair.bindMw), not a posted BIND_MW"
                        + "; call ibv_bind_mw for a type 1 window");
                }
                if (qp.device.profile().follows(ProviderRule.MW_BIND_CHECKED_AT_POST))
                {
                    final dev.rnicsim.verbs.MwBindInfo info = b.info();
                    if (mw.type() == MwType.TYPE_1 && info.access().contains(Access.ZERO_BASED)
                        || info.mr() != null && info.mr().access().contains(Access.ZERO_BASED))
                    {
                        throw new PostException(verb, Errno.EINVAL.code(), i, "zero-based type 1 windows and binds "
                            + "to zero-based MRs are refused at post (mlx5_bind_mw)"
                            + "; bind a window that is not zero-based, to an MR that is not zero-based");
                    }
                    if (info.lengthBytes() > 1L << 31)
                    {
                        throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "window of "
                            + info.lengthBytes() + " bytes > 2 GiB (mlx5 set_bind_wr: KLM supports only 2 GB)"
                            + "; bind a window of 2 GiB or less");
                    }
                }
            }
            case REG_MR ->
            {
                if (!(wr.localOp() instanceof SendWr.Reg r) || !(r.mr() instanceof SimFastRegMr fr)
                    || fr.pd().context().device() != qp.device)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "REG_MR needs SendWr.regMr with a "
                        + "fast-registration MR of this device");
                }
            }
            case LOCAL_INV, SEND_WITH_INV ->
            {
                if (!a.has(DeviceCap.MEM_MGT_EXTENSIONS))
                {
                    throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "opcode " + wr.opcode() + ": "
                        + qp.device.profile().name() + " lacks MEM_MGT_EXTENSIONS"
                        + "; use a device with MEM_MGT_EXTENSIONS (mlx5, rxe)");
                }
            }
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD ->
            {
                if (qp.device.profile().follows(ProviderRule.ATOMIC_OPCODES_NOT_IN_PROVIDER))
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "opcode " + wr.opcode() + ": the "
                        + qp.device.profile().driver() + " provider's post_send takes no atomic opcode (libcxgb4 "
                        + "c4iw_post_send, libsiw push_send_wqe: SEND, SEND_WITH_INV, RDMA_WRITE and RDMA_READ; "
                        + "iWARP has no atomics, atomic_cap=ATOMIC_NONE; " + ProviderRule.ATOMIC_OPCODES_NOT_IN_PROVIDER
                        + "); this work "
                        + "request and those after it were not posted; fix: use a device with atomics (mlx5, rxe), or "
                        + "replace the atomic with messages its owner applies");
                }
                if (a.atomicCap() == AtomicCap.NONE)
                {
                    throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "opcode " + wr.opcode()
                        + ": the device reports atomic_cap=ATOMIC_NONE"
                        + "; use a device with atomics (mlx5, rxe)");
                }
                if (wr.sgList().size() != 1 || wr.sgList().get(0).lengthBytes() != Long.BYTES)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "an atomic needs one SGE of 8 bytes, got "
                        + wr.sgList()
                        + "; give one SGE of 8 bytes");
                }
                if (qp.device.profile().follows(ProviderRule.ATOMICS_NEED_QP_ATOMIC_ACCESS) && qp.type != QpType.UD
                    && a.atomicCap() != AtomicCap.HCA)
                {
                    throw new PostException(verb, Errno.EOPNOTSUPP.code(), i, "opcode " + wr.opcode() + " on a QP "
                        + "created without atomics: " + qp.device.profile().driver() + " enables them on a QP only "
                        + "when the device's atomic_cap is ATOMIC_HCA (it is " + a.atomicCap() + ")"
                        + "; use a device with atomic_cap ATOMIC_HCA");
                }
                if (qp.device.profile().follows(ProviderRule.ATOMIC_ALIGNMENT_AT_POST) && (wr.remoteAddr() & 7) != 0)
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "atomic remote address 0x"
                        + Long.toHexString(wr.remoteAddr()) + " is not 8-byte aligned (" + qp.device.profile().driver()
                        + " checks at post time)"
                        + "; give an 8-byte aligned remote address");
                }
            }
            case FLUSH, ATOMIC_WRITE -> PlacementOps.checkPost(qp.device.profile(), qp.type(), wr, i);
            case RDMA_READ ->
            {
                if (wr.sgList().size() > a.maxSgeRd())
                {
                    throw new PostException(verb, Errno.EINVAL.code(), i, "num_sge=" + wr.sgList().size()
                        + " > max_sge_rd=" + a.maxSgeRd()
                        + "; use fewer SGEs");
                }
            }
            default ->
            {
            }
        }
        if (qp.completions.sendSlotsHeld() >= qp.cap.maxSendWr())
        {
            throw SendQueueFull.refusal(verb, i, qp);
        }
        if (!wr.flags().contains(SendFlag.INLINE))
        {
            return null;
        }
        if (wr.opcode() != WrOpcode.SEND && wr.opcode() != WrOpcode.SEND_WITH_IMM && wr.opcode() != WrOpcode.RDMA_WRITE
            && wr.opcode() != WrOpcode.RDMA_WRITE_WITH_IMM)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "IBV_SEND_INLINE is for SEND and RDMA_WRITE only, "
                + "not " + wr.opcode()
                + "; drop IBV_SEND_INLINE");
        }
        final long total = wr.totalBytes();
        if (total > qp.cap.maxInlineDataBytes())
        {
            final Errno errno = qp.device.profile().follows(ProviderRule.INLINE_OVERFLOW_ENOMEM) ? Errno.ENOMEM
                : Errno.EINVAL;
            final int max = qp.cap.maxInlineDataBytes();
            throw new PostException(verb, errno.code(), i, "inline payload of " + total
                + " bytes > max_inline_data=" + Integer.toUnsignedString(max)
                + (max < 0 ? " (libmlx5's " + max + ": the QP's send WQE holds its segments alone, mlx5_calc_sq_size, "
                + "and set_data_inl_seg compares it as an int; create the QP with a send SGE or max_inline_data)" : "")
                + "; send less inline or drop IBV_SEND_INLINE");
        }
        final byte[] payload = new byte[(int)total];
        int at = 0;
        for (final Sge s : wr.sgList())
        {
            try
            {
                final byte[] part = qp.pd.context().process().read(s.addr(), (int)s.lengthBytes());
                System.arraycopy(part, 0, payload, at, part.length);
                at += part.length;
            }
            catch (final KernelException e)
            {
                throw new PostException(verb, e.errno().value(), i, "inline data at 0x" + Long.toHexString(s.addr())
                    + ": " + e.detail());
            }
        }
        return payload;
    }

    /**
     * The checks {@code ibv_bind_mw} makes of a type 1 window and its bind (verbs.h {@code ibv_bind_mw};
     * mlx5_bind_mw) before the bind work request is built.
     *
     * @return the window.
     */
    static SimMw checkBindMw(final SimQp qp, final MemoryWindow mw, final Set<SendFlag> flags, final MwBindInfo info)
    {
        final String verb = "ibv_bind_mw";
        if (!(mw instanceof SimMw m) || m.isClosed())
        {
            throw Errors.invalid(verb, "mw is not a live window of this simulator: " + mw
                + "; bind a window from ibv_alloc_mw that is not deallocated");
        }
        if (m.type() != MwType.TYPE_1)
        {
            throw Errors.invalid(verb, "ibv_bind_mw binds type 1 windows; bind a type 2 window with a posted "
                + "BIND_MW work request (verbs.h ibv_bind_mw)");
        }
        if (info == null || flags == null || NullElements.any(flags))
        {
            throw Errors.invalid(verb, "mw_bind and its send flags must be given, without null elements");
        }
        if (m.pd().context().device() != qp.device)
        {
            throw Errors.invalid(verb, "the window belongs to " + m.pd().context().device().name() + ", not to this"
                + " QP's device " + qp.device.name()
                + "; bind through a QP of the window's device");
        }
        if (info.mr() == null && (info.addr() != 0 || info.lengthBytes() != 0))
        {
            throw Errors.invalid(verb, "no MR but addr=0x" + Long.toHexString(info.addr()) + " length="
                + info.lengthBytes() + " (verbs.h ibv_bind_mw)"
                + "; give an MR, or addr 0 and length 0 to unbind");
        }
        if (info.mr() != null && qp.device.profile().follows(ProviderRule.MW_BIND_CHECKED_AT_POST)
            && !MrTypes.isPlain(info.mr()))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, "the MR is of type " + MrTypes.typeOf(info.mr())
                + ", not a plain MR "
                + "(IBV_MR_TYPE_MR): windows bind only to MRs of ibv_reg_mr (mlx5_bind_mw)");
        }
        if (info.mr() != null && info.mr().pd() != m.pd())
        {
            throw Errors.of(verb, Errno.EPERM, "the MR and the window are in different PDs (verbs.h ibv_bind_mw)"
                + "; bind to an MR of the window's PD");
        }
        return m;
    }

    /** The checks {@code ibv_post_recv} makes of receive work request {@code i}. */
    static void checkRecv(final SimQp qp, final RecvWr wr, final int i)
    {
        final String verb = "ibv_post_recv";
        if (qp.closed)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "the QP is destroyed"
                + " (ibv_destroy_qp released it); create a new QP");
        }
        if (qp.state == QpState.RESET)
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "QP 0x" + Integer.toHexString(qp.num)
                + " is in RESET; receives need INIT or later"
                + "; modify the QP to INIT first");
        }
        final PostException noRecvQueue = XrcRules.recvRefusal(qp, i);
        if (noRecvQueue != null)
        {
            throw noRecvQueue;
        }
        if (qp.srq != null)
        {
            final boolean enomem = qp.device.profile().follows(ProviderRule.RECV_ON_SRQ_QP_ENOMEM);
            throw new PostException(verb, (enomem ? Errno.ENOMEM : Errno.EINVAL).code(), i, "QP 0x"
                + Integer.toHexString(qp.num) + " takes its receives from an SRQ; post them there (ibv_post_srq_recv; "
                + (enomem ? "the provider gave the QP a receive queue of 0 entries, which mlx5_wq_overflow finds full"
                    : "rxe_post_recv refuses a QP with an SRQ") + ")");
        }
        if (wr.sgList().size() > qp.cap.maxRecvSge())
        {
            throw new PostException(verb, Errno.EINVAL.code(), i, "num_sge=" + wr.sgList().size()
                + " > max_recv_sge=" + qp.cap.maxRecvSge()
                + "; use fewer SGEs or create the QP with a larger max_recv_sge");
        }
        if (qp.recvQueue.size() >= qp.cap.maxRecvWr())
        {
            throw new PostException(verb, Errno.ENOMEM.code(), i, "receive queue full: " + qp.recvQueue.size()
                + " = max_recv_wr=" + qp.cap.maxRecvWr()
                + "; poll receive completions first or create the QP with a larger max_recv_wr");
        }
    }
}
