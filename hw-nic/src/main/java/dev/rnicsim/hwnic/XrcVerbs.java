package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.extendedOp;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

/**
 * The XRC verbs of libibverbs, all inline in verbs.h as calls through the extended table ({@code verbs_get_ctx_op}):
 * {@code ibv_get_srq_num} (ibv_get_srq_num(3)), {@code ibv_open_xrcd} and {@code ibv_close_xrcd}
 * (ibv_open_xrcd(3)) and {@code ibv_create_srq_ex} of type IBV_SRQT_XRC (ibv_create_srq_ex(3)). A context whose
 * provider has no such entry (no XRC: rxe, siw) answers EOPNOTSUPP without a call, as the inlines do. Conventions as
 * {@link Libibverbs}.
 *
 * <p>Thread safe: the wrappers keep no state of their own.
 */
final class XrcVerbs
{
    /** {@code struct ibv_xrcd_init_attr}: comp_mask, fd, oflags. */
    static final StructLayout IBV_XRCD_INIT_ATTR = MemoryLayout.structLayout(
        JAVA_INT.withName("comp_mask"), JAVA_INT.withName("fd"), JAVA_INT.withName("oflags"))
        .withName("ibv_xrcd_init_attr");
    /** {@code struct ibv_xrcd}: the context only. */
    static final StructLayout IBV_XRCD = MemoryLayout.structLayout(ADDRESS.withName("context")).withName("ibv_xrcd");
    /** {@code struct ibv_tm_cap}. */
    static final StructLayout IBV_TM_CAP = MemoryLayout.structLayout(
        JAVA_INT.withName("max_num_tags"), JAVA_INT.withName("max_ops")).withName("ibv_tm_cap");
    /** {@code struct ibv_srq_init_attr_ex}: {@code struct ibv_srq_init_attr}'s members, then the extensions. */
    static final StructLayout IBV_SRQ_INIT_ATTR_EX = MemoryLayout.structLayout(
        ADDRESS.withName("srq_context"), SrqVerbs.IBV_SRQ_ATTR.withName("attr"), JAVA_INT.withName("comp_mask"),
        JAVA_INT.withName("srq_type"), MemoryLayout.paddingLayout(4), ADDRESS.withName("pd"),
        ADDRESS.withName("xrcd"), ADDRESS.withName("cq"), IBV_TM_CAP.withName("tm_cap"))
        .withName("ibv_srq_init_attr_ex");

    static final long XRCD_INIT_COMP_MASK = IbvStructs.offset(IBV_XRCD_INIT_ATTR, "comp_mask");
    static final long XRCD_INIT_FD = IbvStructs.offset(IBV_XRCD_INIT_ATTR, "fd");
    static final long XRCD_INIT_OFLAGS = IbvStructs.offset(IBV_XRCD_INIT_ATTR, "oflags");
    static final long SRQ_EX_ATTR = IbvStructs.offset(IBV_SRQ_INIT_ATTR_EX, "attr");
    static final long SRQ_EX_COMP_MASK = IbvStructs.offset(IBV_SRQ_INIT_ATTR_EX, "comp_mask");
    static final long SRQ_EX_SRQ_TYPE = IbvStructs.offset(IBV_SRQ_INIT_ATTR_EX, "srq_type");
    static final long SRQ_EX_PD = IbvStructs.offset(IBV_SRQ_INIT_ATTR_EX, "pd");
    static final long SRQ_EX_XRCD = IbvStructs.offset(IBV_SRQ_INIT_ATTR_EX, "xrcd");
    static final long SRQ_EX_CQ = IbvStructs.offset(IBV_SRQ_INIT_ATTR_EX, "cq");

    /** {@code IBV_XRCD_INIT_ATTR_FD} of {@code enum ibv_xrcd_init_attr_mask}. */
    static final int IBV_XRCD_INIT_ATTR_FD = 1;
    /** {@code IBV_XRCD_INIT_ATTR_OFLAGS}. */
    static final int IBV_XRCD_INIT_ATTR_OFLAGS = 1 << 1;
    /** {@code IBV_SRQ_INIT_ATTR_TYPE} of {@code enum ibv_srq_init_attr_mask}. */
    static final int IBV_SRQ_INIT_ATTR_TYPE = 1;
    /** {@code IBV_SRQ_INIT_ATTR_PD}. */
    static final int IBV_SRQ_INIT_ATTR_PD = 1 << 1;
    /** {@code IBV_SRQ_INIT_ATTR_XRCD}. */
    static final int IBV_SRQ_INIT_ATTR_XRCD = 1 << 2;
    /** {@code IBV_SRQ_INIT_ATTR_CQ}. */
    static final int IBV_SRQ_INIT_ATTR_CQ = 1 << 3;
    /** {@code IBV_SRQT_XRC} of {@code enum ibv_srq_type}. */
    static final int IBV_SRQT_XRC = 1;

    private static final long OP_GET_SRQ_NUM = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "get_srq_num");
    private static final long OP_OPEN_XRCD = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "open_xrcd");
    private static final long OP_CLOSE_XRCD = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "close_xrcd");
    private static final long OP_CREATE_SRQ_EX = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "create_srq_ex");

    private final MethodHandle getSrqNumPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private final MethodHandle openXrcdPtr = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private final MethodHandle closeXrcdPtr = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private final MethodHandle createSrqExPtr = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));

    /**
     * {@code ibv_get_srq_num(srq, &srq_num)}: {@code verbs_get_ctx_op(srq->context, get_srq_num)}; the return value is
     * the errno itself.
     *
     * @param ctx    the SRQ's context.
     * @param srq    the SRQ.
     * @param srqNum a 4-byte slot the provider writes the number to.
     * @return 0 or the errno; EOPNOTSUPP without calling when the provider has no get_srq_num.
     */
    Result getSrqNum(final MemorySegment ctx, final MemorySegment srq, final MemorySegment srqNum)
    {
        final MemorySegment fn = extendedOp(ctx, OP_GET_SRQ_NUM);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)getSrqNumPtr.invokeExact(fn, state, srq, srqNum);
            return new Result(rc, rc);
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_get_srq_num", t);
        }
    }

    /**
     * {@code ibv_open_xrcd(context, xrcd_init_attr)}: {@code verbs_get_ctx_op(context, open_xrcd)}.
     *
     * @param ctx  the context.
     * @param init a {@code struct ibv_xrcd_init_attr}.
     * @return the domain's address, or 0 with errno (EOPNOTSUPP without calling when the provider has no
     *     open_xrcd).
     */
    Result openXrcd(final MemorySegment ctx, final MemorySegment init)
    {
        final MemorySegment fn = extendedOp(ctx, OP_OPEN_XRCD);
        if (fn.address() == 0)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment xrcd = (MemorySegment)openXrcdPtr.invokeExact(fn, state, ctx, init);
            return new Result(xrcd.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_open_xrcd", t);
        }
    }

    /**
     * {@code ibv_close_xrcd(xrcd)}: {@code verbs_get_ctx_op(xrcd->context, close_xrcd)}.
     *
     * @param ctx  the domain's context.
     * @param xrcd the domain.
     * @return 0 or the errno (EBUSY while an XRC SRQ or XRC_RECV QP of it lives).
     */
    Result closeXrcd(final MemorySegment ctx, final MemorySegment xrcd)
    {
        final MemorySegment fn = extendedOp(ctx, OP_CLOSE_XRCD);
        if (fn.address() == 0)
        {
            return new Result(Errno.EOPNOTSUPP.code(), Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)closeXrcdPtr.invokeExact(fn, state, xrcd);
            return new Result(rc, Errnos.errnoOf(rc, Errnos.read(state)));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_close_xrcd", t);
        }
    }

    /**
     * {@code ibv_create_srq_ex(context, srq_init_attr_ex)} for an XRC SRQ (comp_mask TYPE, PD, XRCD and CQ), which
     * the inline always sends to {@code verbs_get_ctx_op(context, create_srq_ex)}.
     *
     * @param ctx    the context.
     * @param initEx a {@code struct ibv_srq_init_attr_ex}; the provider writes the granted max_wr and max_sge back.
     * @return the SRQ address, or 0 with errno (EOPNOTSUPP without calling when the provider has no create_srq_ex).
     */
    Result createSrqEx(final MemorySegment ctx, final MemorySegment initEx)
    {
        final MemorySegment fn = extendedOp(ctx, OP_CREATE_SRQ_EX);
        if (fn.address() == 0)
        {
            return new Result(0, Errno.EOPNOTSUPP.code());
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment srq = (MemorySegment)createSrqExPtr.invokeExact(fn, state, ctx, initEx);
            return new Result(srq.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_create_srq_ex", t);
        }
    }
}
