package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.UdSendWr;
import dev.rnicsim.verbs.WrOpcode;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.List;

/**
 * verbs-api work requests written as libibverbs takes them: {@code struct ibv_send_wr} with its {@code wr.rdma},
 * {@code wr.atomic}, {@code wr.ud} and {@code bind_mw} members, {@code struct ibv_recv_wr}, and their
 * {@code struct ibv_sge} arrays (ibv_post_send(3), ibv_post_recv(3)). What cannot be expressed natively comes back
 * as "ERRNO reason" instead of being written.
 *
 * <p>Thread safe: stateless.
 */
final class WorkRequests
{
    private static final long SGE_BYTES = WrStructs.IBV_SGE.byteSize();
    /** {@code wr.ud.ah} of {@code struct ibv_send_wr}. */
    static final long SEND_WR_UD_AH = IbvStructs.offset(WrStructs.IBV_SEND_WR, "wr", "ud", "ah");
    /** {@code wr.ud.remote_qpn}. */
    static final long SEND_WR_UD_REMOTE_QPN = IbvStructs.offset(WrStructs.IBV_SEND_WR, "wr", "ud", "remote_qpn");
    /** {@code wr.ud.remote_qkey}. */
    static final long SEND_WR_UD_REMOTE_QKEY = IbvStructs.offset(WrStructs.IBV_SEND_WR, "wr", "ud", "remote_qkey");

    private WorkRequests()
    {
    }

    /**
     * Writes one {@code struct ibv_send_wr} (next left NULL).
     *
     * @param w       the work request's memory.
     * @param wr      the work request.
     * @param sgList  room for its SGEs, {@code sgList().size()} {@code struct ibv_sge}.
     * @param context the QP's context, which a BIND_MW's window must belong to.
     * @return null, or "ERRNO reason" for what cannot be expressed natively.
     */
    static String writeSend(final MemorySegment w, final SendWr wr, final MemorySegment sgList,
        final RdmaContext context)
    {
        w.fill((byte)0);
        w.set(JAVA_LONG, WrStructs.SEND_WR_WR_ID, wr.wrId());
        w.set(JAVA_INT, WrStructs.SEND_WR_OPCODE, wr.opcode().code());
        int flags = 0;
        for (final SendFlag f : wr.flags())
        {
            flags |= f.bit();
        }
        w.set(JAVA_INT, WrStructs.SEND_WR_SEND_FLAGS, flags);
        switch (wr.opcode())
        {
            case REG_MR ->
            {
                return "EOPNOTSUPP IB_WR_REG_MR is a kernel verb: libibverbs cannot post it";
            }
            case FLUSH, ATOMIC_WRITE ->
            {
                return "EOPNOTSUPP " + wr.opcode() + " is posted only by the ibv_wr_* builders of a QP created with "
                    + "ibv_create_qp_ex (ibv_wr_post(3)), which this binding does not reach yet";
            }
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ ->
            {
                w.set(JAVA_LONG, WrStructs.SEND_WR_RDMA_REMOTE_ADDR, wr.remoteAddr());
                w.set(JAVA_INT, WrStructs.SEND_WR_RDMA_RKEY, wr.rkey());
            }
            case ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD ->
            {
                w.set(JAVA_LONG, WrStructs.SEND_WR_ATOMIC_REMOTE_ADDR, wr.remoteAddr());
                w.set(JAVA_LONG, WrStructs.SEND_WR_ATOMIC_COMPARE_ADD, wr.compareAdd());
                w.set(JAVA_LONG, WrStructs.SEND_WR_ATOMIC_SWAP, wr.swap());
                w.set(JAVA_INT, WrStructs.SEND_WR_ATOMIC_RKEY, wr.rkey());
            }
            case LOCAL_INV, SEND_WITH_INV -> w.set(JAVA_INT, WrStructs.SEND_WR_INVALIDATE_RKEY, wr.invalidateRkey());
            case BIND_MW ->
            {
                final String problem = writeBind(w, wr, context);
                if (problem != null)
                {
                    return problem;
                }
            }
            default ->
            {
            }
        }
        // wr.qp_type.xrc.remote_srqn: the target's XRC SRQ on an XRC_SEND QP (ibv_post_send(3)); 0 elsewhere.
        w.set(JAVA_INT, WrStructs.SEND_WR_XRC_REMOTE_SRQN, wr.remoteSrqn());
        if (wr.opcode() == WrOpcode.SEND_WITH_IMM || wr.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM)
        {
            // imm_data is __be32: network order in the work request, host order in verbs-api.
            w.set(JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), WrStructs.SEND_WR_IMM_DATA, wr.immData());
        }
        if (!wr.sgList().isEmpty())
        {
            writeSges(sgList, wr.sgList());
            w.set(ADDRESS, WrStructs.SEND_WR_SG_LIST, sgList);
            w.set(JAVA_INT, WrStructs.SEND_WR_NUM_SGE, wr.sgList().size());
        }
        return null;
    }

    /**
     * Writes one {@code struct ibv_recv_wr} (next left NULL).
     *
     * @param w      the work request's memory.
     * @param wr     the work request.
     * @param sgList room for its SGEs.
     */
    static void writeRecv(final MemorySegment w, final RecvWr wr, final MemorySegment sgList)
    {
        w.fill((byte)0);
        w.set(JAVA_LONG, WrStructs.RECV_WR_WR_ID, wr.wrId());
        if (!wr.sgList().isEmpty())
        {
            writeSges(sgList, wr.sgList());
            w.set(ADDRESS, WrStructs.RECV_WR_SG_LIST, sgList);
            w.set(JAVA_INT, WrStructs.RECV_WR_NUM_SGE, wr.sgList().size());
        }
    }

    /** Writes the SGEs as an array of {@code struct ibv_sge}. */
    static void writeSges(final MemorySegment list, final List<Sge> sgl)
    {
        for (int i = 0; i < sgl.size(); i++)
        {
            final Sge s = sgl.get(i);
            list.set(JAVA_LONG, i * SGE_BYTES + WrStructs.SGE_ADDR, s.addr());
            list.set(JAVA_INT, i * SGE_BYTES + WrStructs.SGE_LENGTH, (int)s.lengthBytes());
            list.set(JAVA_INT, i * SGE_BYTES + WrStructs.SGE_LKEY, s.lkey());
        }
    }

    private static String writeBind(final MemorySegment w, final SendWr wr, final RdmaContext context)
    {
        if (!(wr.localOp() instanceof SendWr.Bind b))
        {
            return "EINVAL BIND_MW needs SendWr.bindMw with a window and its bind";
        }
        if (!(b.mw() instanceof RdmaMw m) || m.isClosed() || m.pd().context() != context)
        {
            return "EINVAL the window is not a live window of this QP's context: " + b.mw();
        }
        final MwBindInfo info = b.info();
        final MemorySegment mr;
        if (info.mr() == null)
        {
            mr = MemorySegment.NULL;
        }
        else if (info.mr() instanceof RdmaMr r && !r.isClosed())
        {
            mr = r.segment();
        }
        else
        {
            return "EINVAL the bind's MR is not a registered MR of this backend: " + info.mr();
        }
        w.set(ADDRESS, WrStructs.SEND_WR_BIND_MW_MW, m.segment());
        w.set(JAVA_INT, WrStructs.SEND_WR_BIND_MW_RKEY, b.newRkey());
        bindInfo(w.asSlice(WrStructs.SEND_WR_BIND_MW_BIND_INFO, WrStructs.IBV_MW_BIND_INFO), mr, info);
        return null;
    }

    static void bindInfo(final MemorySegment bi, final MemorySegment mr, final MwBindInfo info)
    {
        bi.set(ADDRESS, WrStructs.BIND_INFO_MR, mr);
        bi.set(JAVA_LONG, WrStructs.BIND_INFO_ADDR, info.addr());
        bi.set(JAVA_LONG, WrStructs.BIND_INFO_LENGTH, info.lengthBytes());
        bi.set(JAVA_INT, WrStructs.BIND_INFO_ACCESS, Access.toBits(info.access()));
    }

    /**
     * Writes the {@code wr.ud} member of a send work request already written by {@link #writeSend}: the address
     * handle, the destination QP number and its Q_Key (ibv_post_send(3)).
     *
     * @param w  the work request's memory.
     * @param ud the datagram's destination.
     * @param pd the sending QP's PD, which the address handle must belong to (the kernel's and providers' rule).
     * @return null, or "ERRNO reason".
     */
    static String writeUd(final MemorySegment w, final UdSendWr ud, final RdmaPd pd)
    {
        if (ud.wr().opcode() != WrOpcode.SEND && ud.wr().opcode() != WrOpcode.SEND_WITH_IMM)
        {
            return "EINVAL a UD QP posts SEND and SEND_WITH_IMM only, not " + ud.wr().opcode();
        }
        if (!(ud.ah() instanceof RdmaAh ah) || ah.isClosed())
        {
            return "EINVAL the address handle is not a live address handle of this backend: " + ud.ah();
        }
        if (ah.pd() != pd)
        {
            return "EINVAL the address handle belongs to another PD than the QP";
        }
        w.set(ADDRESS, SEND_WR_UD_AH, ah.segment());
        w.set(JAVA_INT, SEND_WR_UD_REMOTE_QPN, ud.remoteQpn());
        w.set(JAVA_INT, SEND_WR_UD_REMOTE_QKEY, ud.remoteQkey());
        return null;
    }
}
