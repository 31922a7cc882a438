package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * An rdma-core completion queue ({@code struct ibv_cq}). {@link #poll} is verbs.h's inline {@code ibv_poll_cq}:
 * a call of {@code context->ops.poll_cq} into an array of {@code struct ibv_wc} the CQ keeps for reuse (it grows
 * to the largest poll; it lives in an arena closed with the CQ, never in GC-managed memory).
 *
 * <p>Not thread safe: one thread polls a CQ at a time.
 */
public final class RdmaCq implements CompletionQueue
{
    private static final WcOpcode[] OPCODES = new WcOpcode[256];

    static
    {
        for (final WcOpcode o : WcOpcode.values())
        {
            if (o != WcOpcode.REG_MR)
            {
                OPCODES[o.code()] = o;
            }
        }
    }

    private final RdmaContext context;
    private final MemorySegment cq;
    private int cqe;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment state = Errnos.state(arena);
    private MemorySegment wcs;
    private int wcCapacity;
    private boolean closed;

    RdmaCq(final RdmaContext context, final MemorySegment cq)
    {
        this.context = context;
        this.cq = cq;
        this.cqe = cq.get(JAVA_INT, IbvStructs.CQ_CQE);
    }

    @Override
    public RdmaContext context()
    {
        return context;
    }

    @Override
    public int cqe()
    {
        return cqe;
    }

    /**
     * {@code ibv_poll_cq}.
     *
     * @param maxEntries most completions to return; 0 or less polls nothing.
     * @return the completions, oldest first.
     * @throws VerbsException EINVAL when the CQ is closed; the provider's negative return (as a positive errno)
     *                        when polling fails.
     */
    @Override
    public List<WorkCompletion> poll(final int maxEntries)
    {
        if (closed)
        {
            throw new VerbsException("ibv_poll_cq", Errno.EINVAL.code(), "the CQ is destroyed");
        }
        if (maxEntries <= 0)
        {
            return new ArrayList<>();
        }
        // More than the CQ holds cannot come back: the buffer never grows past its cqe.
        final int wanted = Math.min(maxEntries, Math.max(1, cqe));
        if (wanted > wcCapacity)
        {
            final int capacity = Math.min(Math.max(wanted, Math.max(16, wcCapacity * 2)), Math.max(1, cqe));
            wcs = arena.allocate(WrStructs.IBV_WC, capacity);
            wcCapacity = capacity;
        }
        final int n = context.lib().pollCq(context.pollCqFn(), state, cq, wanted, wcs);
        if (n < 0)
        {
            // ibv_poll_cq's negative value is no errno (mlx5 returns -2): take errno, else EIO.
            final int errno = Errnos.read(state);
            throw new VerbsException("ibv_poll_cq", errno != 0 ? errno : Errno.EIO.code(), "the provider returned "
                + n);
        }
        final List<WorkCompletion> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++)
        {
            out.add(read(wcs.asSlice(i * WrStructs.IBV_WC.byteSize(), WrStructs.IBV_WC)));
        }
        return out;
    }

    /**
     * A {@code struct ibv_wc} as a work completion: imm_data from network order; invalidated_rkey (the same
     * storage) only with IBV_WC_WITH_INV. An opcode with no verbs-api constant (IBV_WC_TSO, driver codes), or the
     * undefined opcode of a failed completion, reads as SEND: ibv_poll_cq(3) defines only wr_id, status, qp_num and
     * vendor_err for failures. src_qp, IBV_WC_GRH, slid, sl, pkey_index and dlid_path_bits are read as the provider
     * filled them (UD receives).
     */
    static WorkCompletion read(final MemorySegment wc)
    {
        final WcStatus status = WcStatus.of(wc.get(JAVA_INT, WrStructs.WC_STATUS));
        final int opcode = wc.get(JAVA_INT, WrStructs.WC_OPCODE);
        final WcOpcode op = opcode >= 0 && opcode < OPCODES.length && OPCODES[opcode] != null ? OPCODES[opcode]
            : WcOpcode.SEND;
        final int flags = wc.get(JAVA_INT, WrStructs.WC_WC_FLAGS);
        final boolean withImm = status == WcStatus.SUCCESS && (flags & Ibv.IBV_WC_WITH_IMM) != 0;
        final boolean withInv = status == WcStatus.SUCCESS && (flags & Ibv.IBV_WC_WITH_INV) != 0;
        final int raw = wc.get(JAVA_INT, WrStructs.WC_IMM_DATA);
        final int imm = withImm ? wc.get(JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), WrStructs.WC_IMM_DATA)
            : 0;
        return new WorkCompletion(wc.get(JAVA_LONG, WrStructs.WC_WR_ID), status, op,
            wc.get(JAVA_INT, WrStructs.WC_QP_NUM), Integer.toUnsignedLong(wc.get(JAVA_INT, WrStructs.WC_BYTE_LEN)),
            withImm, imm, withInv, withInv ? raw : 0, wc.get(JAVA_INT, WrStructs.WC_VENDOR_ERR)).withDatagram(
            wc.get(JAVA_INT, WrStructs.WC_SRC_QP), (flags & Ibv.IBV_WC_GRH) != 0,
            Short.toUnsignedInt(wc.get(JAVA_SHORT, WrStructs.WC_SLID)), Byte.toUnsignedInt(wc.get(JAVA_BYTE,
            WrStructs.WC_SL)), Short.toUnsignedInt(wc.get(JAVA_SHORT, WrStructs.WC_PKEY_INDEX)),
            Byte.toUnsignedInt(wc.get(JAVA_BYTE, WrStructs.WC_DLID_PATH_BITS)));
    }

    /**
     * {@code ibv_resize_cq}: the provider's rules and rounding; {@link #cqe()} then reads the size it granted.
     *
     * @throws VerbsException EINVAL when the CQ is destroyed; the provider's errno (EINVAL for a size it refuses,
     *                        EOPNOTSUPP where it cannot resize): the CQ stays as it was.
     */
    @Override
    public void resize(final int newCqe)
    {
        if (closed)
        {
            throw new VerbsException("ibv_resize_cq", Errno.EINVAL.code(), "the CQ is destroyed");
        }
        final Errnos.Result r = context.lib().resizeCq(cq, newCqe);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_resize_cq", r.errno(), "the provider refused cqe=" + newCqe
                + " (the CQ keeps its " + cqe + " entries)");
        }
        cqe = cq.get(JAVA_INT, IbvStructs.CQ_CQE);
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_destroy_cq}. Idempotent.
     *
     * @throws VerbsException the errno (EBUSY while a QP still uses it): the CQ stays.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = context.lib().destroyCq(cq);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_destroy_cq", r.errno(), "the CQ stays (a QP still uses it?)");
        }
        closed = true;
        arena.close();
        context.cqClosed(this);
    }

    MemorySegment segment()
    {
        return cq;
    }
}
