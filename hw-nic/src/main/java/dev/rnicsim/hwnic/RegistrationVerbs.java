package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.extendedOp;
import static dev.rnicsim.hwnic.Downcalls.handle;
import static dev.rnicsim.hwnic.Downcalls.optional;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The registration verbs of libibverbs: memory regions ({@code ibv_reg_mr_iova2}, {@code ibv_reg_dmabuf_mr},
 * {@code ibv_dereg_mr}, {@code ibv_rereg_mr}), memory windows ({@code ibv_alloc_mw}, {@code ibv_dealloc_mw},
 * {@code ibv_bind_mw}, inline in verbs.h over the context's ops table) and {@code ibv_advise_mr} (inline over the
 * extended table). Conventions as {@link Libibverbs}.
 *
 * <p>Thread safe: the wrappers keep no state of their own.
 */
final class RegistrationVerbs
{
    private final MethodHandle bindMwPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        ADDRESS));
    private final MethodHandle allocMwPtr = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    private final MethodHandle deallocMwPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private final MethodHandle adviseMrPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
        JAVA_INT, ADDRESS, JAVA_INT));
    private final MethodHandle regMrIova2;
    /** {@code ibv_reg_dmabuf_mr} (IBVERBS_1.12, rdma-core 34); null when the library predates it. */
    private final MethodHandle regDmabufMr;
    private final MethodHandle deregMr;
    private final MethodHandle reregMr;

    RegistrationVerbs(final String libraryName, final SymbolLookup lookup)
    {
        regMrIova2 = handle(lookup, libraryName, "ibv_reg_mr_iova2", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS,
            JAVA_LONG, JAVA_LONG, JAVA_INT));
        regDmabufMr = optional(lookup, "ibv_reg_dmabuf_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));
        deregMr = handle(lookup, libraryName, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        reregMr = handle(lookup, libraryName, "ibv_rereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT,
            ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
    }

    /**
     * {@code ibv_reg_mr_iova2} (ibv_reg_mr(3)); the {@code ibv_reg_mr} and {@code ibv_reg_mr_iova} macros of
     * verbs.h end here too.
     *
     * @param pd          a PD.
     * @param addr        first byte.
     * @param lengthBytes bytes.
     * @param iova        the address keys use.
     * @param access      ibv_access_flags bits.
     * @return the MR address, or 0 with errno.
     */
    Result regMr(final MemorySegment pd, final long addr, final long lengthBytes, final long iova, final int access)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mr = (MemorySegment)regMrIova2.invokeExact(state, pd, MemorySegment.ofAddress(addr),
                lengthBytes, iova, access);
            return new Result(mr.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_reg_mr_iova2", t);
        }
    }

    /**
     * {@code ibv_reg_dmabuf_mr} (ibv_reg_mr(3)).
     *
     * @param pd          the PD.
     * @param offset      first byte inside the dma-buf.
     * @param lengthBytes bytes.
     * @param iova        the address accesses use.
     * @param fd          the dma-buf's file descriptor.
     * @param access      IBV_ACCESS_* bits.
     * @return the MR pointer (NULL on failure) and errno; EOPNOTSUPP without calling when the library lacks the
     * function.
     */
    Result regDmabufMr(final MemorySegment pd, final long offset, final long lengthBytes, final long iova,
        final int fd, final int access)
    {
        if (regDmabufMr == null)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mr = (MemorySegment)regDmabufMr.invokeExact(state, pd, offset, lengthBytes, iova, fd,
                access);
            return new Result(mr.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_reg_dmabuf_mr", t);
        }
    }

    /**
     * @param mr an MR.
     * @return {@code ibv_dereg_mr}: 0 or the errno.
     */
    Result deregMr(final MemorySegment mr)
    {
        return Downcalls.intCall("ibv_dereg_mr", deregMr, mr);
    }

    /**
     * {@code ibv_rereg_mr} (ibv_rereg_mr(3)).
     *
     * @param mr          the MR.
     * @param flags       IBV_REREG_MR_CHANGE_* bits.
     * @param pd          the new PD (or NULL).
     * @param addr        the new first byte.
     * @param lengthBytes the new length.
     * @param access      the new access bits.
     * @return 0, or an IBV_REREG_MR_ERR_* code with errno.
     */
    Result reregMr(final MemorySegment mr, final int flags, final MemorySegment pd, final long addr,
        final long lengthBytes, final int access)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)reregMr.invokeExact(state, mr, flags, pd, MemorySegment.ofAddress(addr), lengthBytes,
                access);
            return new Result(rc, Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_rereg_mr", t);
        }
    }

    /**
     * {@code ibv_alloc_mw} as verbs.h inlines it: EOPNOTSUPP when the provider has no {@code alloc_mw}, else the
     * call through the ops table.
     *
     * @param ctx  the PD's context.
     * @param pd   a PD.
     * @param type IBV_MW_TYPE_1 or _2.
     * @return the MW address, or 0 with errno.
     */
    Result allocMw(final MemorySegment ctx, final MemorySegment pd, final int type)
    {
        final MemorySegment fn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_ALLOC_MW);
        if (fn.address() == 0)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mw = (MemorySegment)allocMwPtr.invokeExact(fn, state, pd, type);
            return new Result(mw.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_alloc_mw", t);
        }
    }

    /**
     * @param ctx the window's context.
     * @param mw  a window.
     * @return {@code ibv_dealloc_mw} (inline: ops.dealloc_mw): 0 or the errno.
     */
    Result deallocMw(final MemorySegment ctx, final MemorySegment mw)
    {
        final MemorySegment fn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_DEALLOC_MW);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)deallocMwPtr.invokeExact(fn, state, mw);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_dealloc_mw", t);
        }
    }

    /**
     * The call of {@code ibv_bind_mw} through ops.bind_mw; the caller makes the inline function's checks first.
     *
     * @param ctx    the window's context.
     * @param qp     the QP that posts the bind.
     * @param mw     a type 1 window.
     * @param mwBind a {@code struct ibv_mw_bind}.
     * @return 0 or the errno.
     */
    Result bindMw(final MemorySegment ctx, final MemorySegment qp, final MemorySegment mw, final MemorySegment mwBind)
    {
        final MemorySegment fn = ctx.get(ADDRESS, IbvStructs.CONTEXT_OPS_BIND_MW);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)bindMwPtr.invokeExact(fn, state, qp, mw, mwBind);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_bind_mw", t);
        }
    }

    /**
     * {@code ibv_advise_mr} (ibv_advise_mr(3)) as verbs.h inlines it: EOPNOTSUPP when the context's extended table
     * has no {@code advise_mr}.
     *
     * @param ctx    the PD's context.
     * @param pd     a PD.
     * @param advice IBV_ADVISE_MR_ADVICE_*.
     * @param flags  IBV_ADVISE_MR_FLAG_FLUSH or 0.
     * @param sgList {@code struct ibv_sge} array.
     * @param numSge entries.
     * @return 0 or the errno.
     */
    Result adviseMr(final MemorySegment ctx, final MemorySegment pd, final int advice, final int flags,
        final MemorySegment sgList, final int numSge)
    {
        final MemorySegment fn = extendedOp(ctx, IbvStructs.VERBS_CONTEXT_ADVISE_MR);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)adviseMrPtr.invokeExact(fn, state, pd, advice, flags, sgList, numSge);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_advise_mr", t);
        }
    }
}
