package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.handle;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The shared receive queues of libibverbs (ibv_create_srq(3), ibv_modify_srq(3), ibv_query_srq(3),
 * ibv_post_srq_recv(3)): {@code ibv_create_srq}, {@code ibv_modify_srq}, {@code ibv_query_srq} and
 * {@code ibv_destroy_srq} are exported; {@code ibv_post_srq_recv} is inline in verbs.h, a call through
 * {@code srq->context->ops.post_srq_recv}. Conventions as {@link Libibverbs}.
 *
 * <p>Thread safe: the wrappers keep no state of their own.
 */
final class SrqVerbs
{
    /** {@code struct ibv_srq_attr}. */
    static final StructLayout IBV_SRQ_ATTR = java.lang.foreign.MemoryLayout.structLayout(
        JAVA_INT.withName("max_wr"), JAVA_INT.withName("max_sge"), JAVA_INT.withName("srq_limit"))
        .withName("ibv_srq_attr");
    /** {@code struct ibv_srq_init_attr}: srq_context, then the attributes. */
    static final StructLayout IBV_SRQ_INIT_ATTR = java.lang.foreign.MemoryLayout.structLayout(
        ADDRESS.withName("srq_context"), IBV_SRQ_ATTR.withName("attr"),
        java.lang.foreign.MemoryLayout.paddingLayout(4)).withName("ibv_srq_init_attr");
    /** Offset of {@code attr} in {@code struct ibv_srq_init_attr}. */
    static final long SRQ_INIT_ATTR = IbvStructs.offset(IBV_SRQ_INIT_ATTR, "attr");
    /** {@code IBV_SRQ_MAX_WR} of {@code enum ibv_srq_attr_mask}. */
    static final int IBV_SRQ_MAX_WR = 1;
    /** {@code IBV_SRQ_LIMIT}. */
    static final int IBV_SRQ_LIMIT = 1 << 1;
    /** Offset of {@code ops.post_srq_recv} in {@code struct ibv_context}. */
    static final long CONTEXT_OPS_POST_SRQ_RECV = IbvStructs.offset(IbvStructs.IBV_CONTEXT, "ops", "post_srq_recv");

    private final MethodHandle postSrqRecvPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS));
    private final MethodHandle createSrq;
    private final MethodHandle modifySrq;
    private final MethodHandle querySrq;
    private final MethodHandle destroySrq;

    SrqVerbs(final String libraryName, final SymbolLookup lookup)
    {
        createSrq = handle(lookup, libraryName, "ibv_create_srq", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        modifySrq = handle(lookup, libraryName, "ibv_modify_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
            JAVA_INT));
        querySrq = handle(lookup, libraryName, "ibv_query_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        destroySrq = handle(lookup, libraryName, "ibv_destroy_srq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    /**
     * {@code ibv_create_srq(pd, init_attr)}; the provider writes the granted max_wr and max_sge back.
     *
     * @param pd       the PD.
     * @param initAttr a {@code struct ibv_srq_init_attr}.
     * @return the SRQ address, or 0 with errno.
     */
    Result createSrq(final MemorySegment pd, final MemorySegment initAttr)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment srq = (MemorySegment)createSrq.invokeExact(state, pd, initAttr);
            return new Result(srq.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_create_srq", t);
        }
    }

    /**
     * @param srq  an SRQ.
     * @param attr a {@code struct ibv_srq_attr}.
     * @param mask IBV_SRQ_MAX_WR and IBV_SRQ_LIMIT bits.
     * @return {@code ibv_modify_srq}: 0 or the errno.
     */
    Result modifySrq(final MemorySegment srq, final MemorySegment attr, final int mask)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)modifySrq.invokeExact(state, srq, attr, mask);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_modify_srq", t);
        }
    }

    /**
     * @param srq  an SRQ.
     * @param attr a {@code struct ibv_srq_attr} to fill.
     * @return {@code ibv_query_srq}: 0 or the errno.
     */
    Result querySrq(final MemorySegment srq, final MemorySegment attr)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)querySrq.invokeExact(state, srq, attr);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_query_srq", t);
        }
    }

    /**
     * @param srq an SRQ.
     * @return {@code ibv_destroy_srq}: 0 or the errno (EBUSY while a QP uses it).
     */
    Result destroySrq(final MemorySegment srq)
    {
        return Downcalls.intCall("ibv_destroy_srq", destroySrq, srq);
    }

    /**
     * {@code ibv_post_srq_recv}: {@code srq->context->ops.post_srq_recv(srq, wr, bad_wr)}.
     *
     * @param ctx   the SRQ's context.
     * @param srq   the SRQ.
     * @param wr    the first receive work request.
     * @param badWr a pointer-sized slot for bad_wr.
     * @return 0 or the errno; EOPNOTSUPP without calling when the provider has no post_srq_recv.
     */
    Result postSrqRecv(final MemorySegment ctx, final MemorySegment srq, final MemorySegment wr,
        final MemorySegment badWr)
    {
        final MemorySegment fn = ctx.get(ADDRESS, CONTEXT_OPS_POST_SRQ_RECV);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)postSrqRecvPtr.invokeExact(fn, state, srq, wr, badWr);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_post_srq_recv", t);
        }
    }
}
