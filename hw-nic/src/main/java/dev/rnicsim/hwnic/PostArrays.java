package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The native memory a QP posts from, kept for reuse (DiSNI's stateful verb calls, without JNI): the
 * {@code struct ibv_send_wr} and {@code struct ibv_recv_wr} arrays, one {@code struct ibv_sge} array, the
 * {@code bad_wr} slot and the errno capture state of {@code ibv_post_send} / {@code ibv_post_recv}. The arrays
 * grow on demand and live until {@link #close()}.
 *
 * <p>Not thread safe: one thread posts on a QP at a time.
 */
final class PostArrays implements AutoCloseable
{
    private static final long SEND_WR_BYTES = WrStructs.IBV_SEND_WR.byteSize();
    private static final long RECV_WR_BYTES = WrStructs.IBV_RECV_WR.byteSize();
    private static final long SGE_BYTES = WrStructs.IBV_SGE.byteSize();

    private final Arena arena = Arena.ofShared();
    private final MemorySegment state = Errnos.state(arena);
    private final MemorySegment badWr = arena.allocate(ADDRESS);
    private MemorySegment sendWrs = MemorySegment.NULL;
    private MemorySegment recvWrs = MemorySegment.NULL;
    private MemorySegment sges = MemorySegment.NULL;

    /**
     * @param wrCount  work requests to write.
     * @param sgeCount SGEs they carry in all.
     * @return room for wrCount send work requests; {@link #sges()} then has room for sgeCount SGEs.
     */
    MemorySegment sendWrs(final int wrCount, final int sgeCount)
    {
        if (sendWrs.byteSize() < wrCount * SEND_WR_BYTES)
        {
            sendWrs = arena.allocate(WrStructs.IBV_SEND_WR, Math.max(wrCount, 16));
        }
        ensureSges(sgeCount);
        return sendWrs;
    }

    /**
     * @param wrCount  work requests to write.
     * @param sgeCount SGEs they carry in all.
     * @return room for wrCount receive work requests; {@link #sges()} then has room for sgeCount SGEs.
     */
    MemorySegment recvWrs(final int wrCount, final int sgeCount)
    {
        if (recvWrs.byteSize() < wrCount * RECV_WR_BYTES)
        {
            recvWrs = arena.allocate(WrStructs.IBV_RECV_WR, Math.max(wrCount, 16));
        }
        ensureSges(sgeCount);
        return recvWrs;
    }

    private void ensureSges(final int sgeCount)
    {
        if (sges.byteSize() < sgeCount * SGE_BYTES)
        {
            sges = arena.allocate(WrStructs.IBV_SGE, Math.max(sgeCount, 64));
        }
    }

    /**
     * @return the SGE array.
     */
    MemorySegment sges()
    {
        return sges;
    }

    /**
     * @return the errno capture state of the post calls.
     */
    MemorySegment state()
    {
        return state;
    }

    /**
     * @return the pointer-sized {@code bad_wr} slot.
     */
    MemorySegment badWr()
    {
        return badWr;
    }

    /** Sets each {@code next} to the following element, the last to NULL. */
    static void link(final MemorySegment array, final int count, final long size, final long nextOffset)
    {
        for (int i = 0; i < count; i++)
        {
            array.set(ADDRESS, i * size + nextOffset, i + 1 < count
                ? MemorySegment.ofAddress(array.address() + (i + 1) * size) : MemorySegment.NULL);
        }
    }

    /** The index of {@code *bad_wr} in the posted array (0 when the provider left it outside). */
    int badIndex(final MemorySegment array, final long size, final int count)
    {
        final long bad = badWr.get(ADDRESS, 0).address();
        final long index = (bad - array.address()) / size;
        return bad >= array.address() && index < count ? (int)index : 0;
    }

    /** Frees the arrays. */
    @Override
    public void close()
    {
        arena.close();
    }
}
