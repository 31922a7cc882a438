package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A send work request ({@code struct ibv_send_wr}). Fields an opcode does not use are 0. Build them with the
 * static factories, which set {@link SendFlag#SIGNALED}.
 *
 * @param wrId           the caller's identifier, returned in the completion.
 * @param opcode         the operation.
 * @param sgList         local buffers: gathered for SEND and WRITE, scattered for READ, one 8-byte SGE for the
 *                       result of an atomic.
 * @param flags          send flags.
 * @param remoteAddr     remote address for RDMA and atomics (an offset for a ZERO_BASED MR).
 * @param rkey           remote key for RDMA and atomics.
 * @param immData        immediate data for the _WITH_IMM opcodes.
 * @param compareAdd     compare value (CMP_AND_SWP), addend (FETCH_AND_ADD), or the 8 bytes an ATOMIC_WRITE stores
 *                       (little-endian, as {@code ibv_wr_atomic_write}'s {@code atomic_wr} holds them on the host).
 * @param swap           swap value (CMP_AND_SWP).
 * @param invalidateRkey the rkey a SEND_WITH_INV or LOCAL_INV invalidates.
 * @param localOp        BIND_MW: the window, its new rkey and the bind; REG_MR: the MR, its new key and access;
 *                       FLUSH: its length, placement type and selectivity (null for the other opcodes).
 * @param remoteSrqn     on an XRC_SEND QP: the number of the XRC SRQ at the target that takes the message
 *                       ({@code wr.qp_type.xrc.remote_srqn}, the XRCETH's XRCSRQ; ibv_post_send(3)); 0 elsewhere.
 */
public record SendWr(long wrId, WrOpcode opcode, List<Sge> sgList, Set<SendFlag> flags, long remoteAddr, int rkey,
    int immData, long compareAdd, long swap, int invalidateRkey, LocalOp localOp, int remoteSrqn)
{
    /** What a BIND_MW, REG_MR or FLUSH work request carries beside the common fields. */
    public sealed interface LocalOp permits Bind, Reg, Flush
    {
    }

    /**
     * The operands of {@code ibv_wr_flush} (ibv_wr_post(3)) beside the rkey and remote address.
     *
     * @param lengthBytes the range's length (RANGE; not used for MR); the responder refuses more than 2^31
     *                    (rxe_resp.c {@code rxe_resp_check_length}, IBA C9-94).
     * @param type        the placement type.
     * @param level       the selectivity level.
     */
    public record Flush(long lengthBytes, FlushPlacement type, FlushSelectivity level) implements LocalOp
    {
        /**
         * @throws IllegalArgumentException when type or level is null.
         * @throws IllegalArgumentException when lengthBytes is negative or above 2^32 - 1 (the RETH DMA length field).
         */
        public Flush
        {
            Given.required(type, "type", "give the placement type (FlushPlacement)");
            Given.required(level, "level", "give the selectivity level (FlushSelectivity)");
            if (lengthBytes < 0 || lengthBytes > 0xffffffffL)
            {
                throw new IllegalArgumentException("flush length " + lengthBytes + " outside 0..2^32-1 (ibv_wr_flush "
                    + "takes a size_t that travels in the RETH's 32-bit DMA length)");
            }
        }
    }

    /**
     * The {@code bind_mw} member of {@code struct ibv_send_wr}.
     *
     * @param mw      the window.
     * @param newRkey the window's rkey after the bind: its index with the consumer's low byte.
     * @param info    the MR, range and rights.
     */
    public record Bind(MemoryWindow mw, int newRkey, MwBindInfo info) implements LocalOp
    {
        /**
         * @throws IllegalArgumentException when mw or info is null.
         */
        public Bind
        {
            Given.required(mw, "mw", "give the window to bind (ProtectionDomain.allocMw)");
            Given.required(info, "info", "give the MR, range and rights (MwBindInfo)");
        }
    }

    /**
     * The kernel's {@code struct ib_reg_wr}.
     *
     * @param mr     the fast-registration MR, its pages set by {@link FastRegMr#mapSg}.
     * @param newKey its lkey and rkey after the registration: its index with the consumer's low byte.
     * @param access the rights.
     */
    public record Reg(FastRegMr mr, int newKey, Set<Access> access) implements LocalOp
    {
        /**
         * @throws IllegalArgumentException when mr, access or a flag of it is null.
         */
        public Reg
        {
            Given.required(mr, "mr", "give the fast-registration MR the work request registers");
            access = Given.list(access, "access", "give the rights (an empty set for none)").isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access));
        }
    }

    /**
     * A work request of an opcode without a local operation.
     *
     * @param wrId           identifier.
     * @param opcode         the operation.
     * @param sgList         local buffers.
     * @param flags          send flags.
     * @param remoteAddr     remote address.
     * @param rkey           remote key.
     * @param immData        immediate data.
     * @param compareAdd     compare value or addend.
     * @param swap           swap value.
     * @param invalidateRkey the rkey to invalidate.
     */
    public SendWr(final long wrId, final WrOpcode opcode, final List<Sge> sgList, final Set<SendFlag> flags,
        final long remoteAddr, final int rkey, final int immData, final long compareAdd, final long swap,
        final int invalidateRkey)
    {
        this(wrId, opcode, sgList, flags, remoteAddr, rkey, immData, compareAdd, swap, invalidateRkey, null);
    }

    /**
     * A work request for any QP type but XRC_SEND (no remote SRQ number).
     *
     * @param wrId           identifier.
     * @param opcode         the operation.
     * @param sgList         local buffers.
     * @param flags          send flags.
     * @param remoteAddr     remote address.
     * @param rkey           remote key.
     * @param immData        immediate data.
     * @param compareAdd     compare value or addend.
     * @param swap           swap value.
     * @param invalidateRkey the rkey to invalidate.
     * @param localOp        the local operation's operands, or null.
     */
    public SendWr(final long wrId, final WrOpcode opcode, final List<Sge> sgList, final Set<SendFlag> flags,
        final long remoteAddr, final int rkey, final int immData, final long compareAdd, final long swap,
        final int invalidateRkey, final LocalOp localOp)
    {
        this(wrId, opcode, sgList, flags, remoteAddr, rkey, immData, compareAdd, swap, invalidateRkey, localOp, 0);
    }

    /**
     * @param wrId    identifier.
     * @param mw      a type 2 window.
     * @param newRkey the window's rkey after the bind (normally {@link #incRkey}{@code (mw.rkey())}).
     * @param info    MR, range and rights.
     * @return a signalled BIND_MW.
     */
    public static SendWr bindMw(final long wrId, final MemoryWindow mw, final int newRkey, final MwBindInfo info)
    {
        return new SendWr(wrId, WrOpcode.BIND_MW, List.of(), SIGNALED, 0, 0, 0, 0, 0, 0, new Bind(mw, newRkey,
            info));
    }

    /**
     * @param wrId identifier.
     * @param rkey the type 2 window's rkey or the fast-registration MR's key to invalidate.
     * @return a signalled LOCAL_INV.
     */
    public static SendWr localInv(final long wrId, final int rkey)
    {
        return new SendWr(wrId, WrOpcode.LOCAL_INV, List.of(), SIGNALED, 0, 0, 0, 0, 0, rkey, null);
    }

    /**
     * @param wrId           identifier.
     * @param sgList         local buffers to gather.
     * @param invalidateRkey the peer's rkey (type 2 window or fast-registration MR) its receive invalidates.
     * @return a signalled SEND_WITH_INV.
     */
    public static SendWr sendWithInv(final long wrId, final List<Sge> sgList, final int invalidateRkey)
    {
        return new SendWr(wrId, WrOpcode.SEND_WITH_INV, sgList, SIGNALED, 0, 0, 0, 0, 0, invalidateRkey, null);
    }

    /**
     * @param wrId   identifier.
     * @param mr     a fast-registration MR whose pages {@link FastRegMr#mapSg} set.
     * @param newKey the key after registration (normally {@link #incRkey}{@code (mr.lkey())}).
     * @param access rights.
     * @return a signalled REG_MR.
     */
    public static SendWr regMr(final long wrId, final FastRegMr mr, final int newKey, final Set<Access> access)
    {
        return new SendWr(wrId, WrOpcode.REG_MR, List.of(), SIGNALED, 0, 0, 0, 0, 0, 0, new Reg(mr, newKey,
            access));
    }

    /**
     * {@code ibv_wr_flush(qpx, rkey, remote_addr, len, type, level)}.
     *
     * @param wrId        identifier.
     * @param remoteAddr  first address of the range (RANGE), or any address of the MR (MR level).
     * @param rkey        remote key; needs the right of the placement type.
     * @param lengthBytes bytes of the range.
     * @param type        placement type.
     * @param level       selectivity level.
     * @return a signalled FLUSH.
     */
    public static SendWr flush(final long wrId, final long remoteAddr, final int rkey, final long lengthBytes,
        final FlushPlacement type, final FlushSelectivity level)
    {
        return new SendWr(wrId, WrOpcode.FLUSH, List.of(), SIGNALED, remoteAddr, rkey, 0, 0, 0, 0,
            new Flush(lengthBytes, type, level));
    }

    /**
     * {@code ibv_wr_atomic_write(qpx, rkey, remote_addr, atomic_wr)}: the 8 bytes are taken at post time.
     *
     * @param wrId       identifier.
     * @param remoteAddr remote address, 8-byte aligned (a misaligned one is refused by the responder).
     * @param rkey       remote key with REMOTE_WRITE.
     * @param value      the 8 bytes, as a little-endian 64-bit value.
     * @return a signalled ATOMIC_WRITE.
     */
    public static SendWr atomicWrite(final long wrId, final long remoteAddr, final int rkey, final long value)
    {
        return new SendWr(wrId, WrOpcode.ATOMIC_WRITE, List.of(), SIGNALED, remoteAddr, rkey, 0, value, 0, 0);
    }

    /**
     * {@code ibv_inc_rkey} (ibv_inc_rkey(3)): the low 8 bits incremented modulo 256, the upper 24 kept.
     *
     * @param rkey a key.
     * @return the next key of the same index.
     */
    public static int incRkey(final int rkey)
    {
        return (rkey & 0xffffff00) | ((rkey + 1) & 0xff);
    }

    private static final Set<SendFlag> SIGNALED = EnumSet.of(SendFlag.SIGNALED);

    /**
     * @throws IllegalArgumentException when opcode, sgList, an SGE, flags or a flag is null.
     */
    public SendWr
    {
        Given.required(opcode, "opcode", "give the work request's opcode (WrOpcode)");
        sgList = Given.list(sgList, "sgList", "give the SGEs (an empty list for no payload)");
        // An unmodifiable EnumSet: its contains (read for every completion) is a bit test.
        flags = Given.list(flags, "flags", "give the send flags (an empty set for none)").isEmpty() ? Set.of()
            : java.util.Collections.unmodifiableSet(EnumSet.copyOf(flags));
    }

    /**
     * @param wrId       identifier.
     * @param sgList     local buffers to gather.
     * @param remoteAddr remote address.
     * @param rkey       remote key.
     * @return a signalled RDMA_WRITE.
     */
    public static SendWr write(final long wrId, final List<Sge> sgList, final long remoteAddr, final int rkey)
    {
        return new SendWr(wrId, WrOpcode.RDMA_WRITE, sgList, SIGNALED, remoteAddr, rkey, 0, 0, 0, 0);
    }

    /**
     * @param wrId       identifier.
     * @param sgList     local buffers to gather.
     * @param remoteAddr remote address.
     * @param rkey       remote key.
     * @param immData    immediate delivered with the receive completion at the peer.
     * @return a signalled RDMA_WRITE_WITH_IMM.
     */
    public static SendWr writeWithImm(final long wrId, final List<Sge> sgList, final long remoteAddr, final int rkey,
        final int immData)
    {
        return new SendWr(wrId, WrOpcode.RDMA_WRITE_WITH_IMM, sgList, SIGNALED, remoteAddr, rkey, immData, 0, 0, 0);
    }

    /**
     * @param wrId       identifier.
     * @param sgList     local buffers to scatter the data into.
     * @param remoteAddr remote address.
     * @param rkey       remote key.
     * @return a signalled RDMA_READ.
     */
    public static SendWr read(final long wrId, final List<Sge> sgList, final long remoteAddr, final int rkey)
    {
        return new SendWr(wrId, WrOpcode.RDMA_READ, sgList, SIGNALED, remoteAddr, rkey, 0, 0, 0, 0);
    }

    /**
     * @param wrId   identifier.
     * @param sgList local buffers to gather.
     * @return a signalled SEND.
     */
    public static SendWr send(final long wrId, final List<Sge> sgList)
    {
        return new SendWr(wrId, WrOpcode.SEND, sgList, SIGNALED, 0, 0, 0, 0, 0, 0);
    }

    /**
     * @param wrId    identifier.
     * @param sgList  local buffers to gather.
     * @param immData immediate delivered with the receive completion.
     * @return a signalled SEND_WITH_IMM.
     */
    public static SendWr sendWithImm(final long wrId, final List<Sge> sgList, final int immData)
    {
        return new SendWr(wrId, WrOpcode.SEND_WITH_IMM, sgList, SIGNALED, 0, 0, immData, 0, 0, 0);
    }

    /**
     * @param wrId       identifier.
     * @param result     one 8-byte SGE receiving the original remote value.
     * @param remoteAddr remote address, 8-byte aligned.
     * @param rkey       remote key with REMOTE_ATOMIC.
     * @param compare    value expected at the remote address.
     * @param swap       value stored there when it equals compare.
     * @return a signalled ATOMIC_CMP_AND_SWP.
     */
    public static SendWr compareAndSwap(final long wrId, final Sge result, final long remoteAddr, final int rkey,
        final long compare, final long swap)
    {
        return new SendWr(wrId, WrOpcode.ATOMIC_CMP_AND_SWP, List.of(result), SIGNALED, remoteAddr, rkey, 0, compare,
            swap, 0);
    }

    /**
     * @param wrId       identifier.
     * @param result     one 8-byte SGE receiving the original remote value.
     * @param remoteAddr remote address, 8-byte aligned.
     * @param rkey       remote key with REMOTE_ATOMIC.
     * @param add        addend.
     * @return a signalled ATOMIC_FETCH_AND_ADD.
     */
    public static SendWr fetchAndAdd(final long wrId, final Sge result, final long remoteAddr, final int rkey,
        final long add)
    {
        return new SendWr(wrId, WrOpcode.ATOMIC_FETCH_AND_ADD, List.of(result), SIGNALED, remoteAddr, rkey, 0, add, 0,
            0);
    }

    /**
     * @param newFlags the flags.
     * @return a copy with these flags.
     */
    public SendWr withFlags(final Set<SendFlag> newFlags)
    {
        return new SendWr(wrId, opcode, sgList, newFlags, remoteAddr, rkey, immData, compareAdd, swap, invalidateRkey,
            localOp, remoteSrqn);
    }

    /**
     * {@code wr.qp_type.xrc.remote_srqn}: the XRC SRQ at the target of an XRC_SEND QP that takes this message.
     *
     * @param srqn the SRQ number ({@code ibv_get_srq_num} at the target).
     * @return a copy carrying it.
     */
    public SendWr withRemoteSrqn(final int srqn)
    {
        return new SendWr(wrId, opcode, sgList, flags, remoteAddr, rkey, immData, compareAdd, swap, invalidateRkey,
            localOp, srqn);
    }

    /**
     * @return total bytes of the SGL.
     */
    public long totalBytes()
    {
        long total = 0;
        for (final Sge s : sgList)
        {
            total += s.lengthBytes();
        }
        return total;
    }
}
