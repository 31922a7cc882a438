package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.IbvStructs.CONTEXT_ABI_COMPAT;
import static dev.rnicsim.hwnic.IbvStructs.VERBS_CONTEXT;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.hwnic.Errnos.Result;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * What every verb family of the binding ({@link Libibverbs}, {@link DeviceQueryVerbs}, {@link RegistrationVerbs},
 * {@link AddressHandleVerbs}, {@link SrqVerbs}, {@link ExtendedQpVerbs}) links and calls the same way: downcall
 * handles for exported functions and for function pointers read from the ops tables, each linked with
 * {@code captureCallState("errno")}, the two common call shapes (an int returning 0 or the errno, a pointer returning
 * NULL with errno set), and verbs.h's {@code verbs_get_ctx_op}.
 *
 * <p>Thread safe: stateless.
 */
// Restricted java.lang.foreign methods (linking, sizing native pointers) are this class's purpose.
@SuppressWarnings("restricted")
final class Downcalls
{
    /** {@code __VERBS_ABI_IS_EXTENDED}: {@code abi_compat} of a context whose {@code struct verbs_context} exists. */
    static final long VERBS_ABI_IS_EXTENDED = -1L;

    private static final Linker LINKER = Linker.nativeLinker();

    private Downcalls()
    {
    }

    /**
     * @param lookup      the library's symbols.
     * @param libraryName the library, for the message.
     * @param symbol      an exported function.
     * @param descriptor  its C signature.
     * @return the downcall handle (errno captured).
     * @throws VerbsException ENOENT naming the rdma-core version needed when the library lacks the function.
     */
    static MethodHandle handle(final SymbolLookup lookup, final String libraryName, final String symbol,
        final FunctionDescriptor descriptor)
    {
        final MemorySegment address = lookup.find(symbol).orElseThrow(() -> new VerbsException("dlsym",
            Errno.ENOENT.code(), libraryName + " has no function " + symbol + ": rdma-core 25 or newer is needed "
                + "(ibv_reg_mr_iova2 appeared with IBVERBS_1.8); upgrade libibverbs1 / rdma-core"));
        return LINKER.downcallHandle(address, descriptor, Errnos.CAPTURE);
    }

    /**
     * @param lookup     the library's symbols.
     * @param symbol     an exported function that older libraries lack.
     * @param descriptor its C signature.
     * @return the downcall handle (errno captured), or null when the library predates the function.
     */
    static MethodHandle optional(final SymbolLookup lookup, final String symbol, final FunctionDescriptor descriptor)
    {
        return lookup.find(symbol).map(a -> LINKER.downcallHandle(a, descriptor, Errnos.CAPTURE)).orElse(null);
    }

    /**
     * @param descriptor the C signature of a function pointer of an ops table.
     * @return a handle taking the address first, then the capture state, then the arguments.
     */
    static MethodHandle pointerHandle(final FunctionDescriptor descriptor)
    {
        return LINKER.downcallHandle(descriptor, Errnos.CAPTURE);
    }

    /**
     * {@code verbs_get_ctx_op(ctx, op)}: the function pointer of the extended table at {@code opOffset}, or NULL
     * when the context has no extended table, the table is too old to have that member, or the member is NULL.
     *
     * @param ctx      a context, {@code IBV_CONTEXT.byteSize()} long.
     * @param opOffset the member's offset in {@code struct verbs_context}.
     * @return the function pointer, or NULL.
     */
    static MemorySegment extendedOp(final MemorySegment ctx, final long opOffset)
    {
        if (ctx.get(ADDRESS, CONTEXT_ABI_COMPAT).address() != VERBS_ABI_IS_EXTENDED)
        {
            return MemorySegment.NULL;
        }
        final MemorySegment vctx = MemorySegment.ofAddress(ctx.address() - IbvStructs.VERBS_CONTEXT_CONTEXT)
            .reinterpret(VERBS_CONTEXT.byteSize());
        final long sz = vctx.get(JAVA_LONG, IbvStructs.VERBS_CONTEXT_SZ);
        if (Long.compareUnsigned(sz, VERBS_CONTEXT.byteSize() - opOffset) < 0)
        {
            return MemorySegment.NULL;
        }
        return vctx.get(ADDRESS, opOffset);
    }

    /**
     * A function of one pointer argument that returns 0 or the errno (some older providers return -1 and set
     * errno).
     *
     * @param verb   the function, for a linkage failure.
     * @param handle its handle.
     * @param arg    the argument.
     * @return the return value and the errno.
     */
    static Result intCall(final String verb, final MethodHandle handle, final MemorySegment arg)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)handle.invokeExact(state, arg);
            return new Result(rc, rc > 0 ? rc : Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    /**
     * A function of one pointer argument that returns a pointer, NULL with errno set on failure.
     *
     * @param verb   the function, for a linkage failure.
     * @param handle its handle.
     * @param arg    the argument.
     * @return the address and the errno.
     */
    static Result pointerCall(final String verb, final MethodHandle handle, final MemorySegment arg)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment p = (MemorySegment)handle.invokeExact(state, arg);
            return new Result(p.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }
}
