package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
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
 * @param compareAdd     compare value (CMP_AND_SWP) or addend (FETCH_AND_ADD).
 * @param swap           swap value (CMP_AND_SWP).
 * @param invalidateRkey the rkey a SEND_WITH_INV or LOCAL_INV invalidates.
 */
public record SendWr(long wrId, WrOpcode opcode, List<Sge> sgList, Set<SendFlag> flags, long remoteAddr, int rkey,
    int immData, long compareAdd, long swap, int invalidateRkey)
{
    private static final Set<SendFlag> SIGNALED = EnumSet.of(SendFlag.SIGNALED);

    /**
     * @throws NullPointerException when opcode, sgList, an SGE or flags is null.
     */
    public SendWr
    {
        Objects.requireNonNull(opcode, "opcode");
        sgList = List.copyOf(Objects.requireNonNull(sgList, "sgList"));
        flags = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
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
        return new SendWr(wrId, opcode, sgList, newFlags, remoteAddr, rkey, immData, compareAdd, swap, invalidateRkey);
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
