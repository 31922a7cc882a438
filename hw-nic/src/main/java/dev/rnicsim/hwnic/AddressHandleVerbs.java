package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.handle;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.hwnic.Errnos.Result;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The address handles of libibverbs (ibv_create_ah(3)): {@code ibv_create_ah} and {@code ibv_destroy_ah}, the path
 * a UD send names in {@code wr.ud.ah}. Conventions as {@link Libibverbs}.
 *
 * <p>Thread safe: the wrappers keep no state of their own.
 */
final class AddressHandleVerbs
{
    private final MethodHandle createAh;
    private final MethodHandle destroyAh;

    AddressHandleVerbs(final String libraryName, final SymbolLookup lookup)
    {
        createAh = handle(lookup, libraryName, "ibv_create_ah", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        destroyAh = handle(lookup, libraryName, "ibv_destroy_ah", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    /**
     * {@code ibv_create_ah(pd, attr)}.
     *
     * @param pd     the PD.
     * @param ahAttr a {@code struct ibv_ah_attr}.
     * @return the AH address, or 0 with errno.
     */
    Result createAh(final MemorySegment pd, final MemorySegment ahAttr)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment ah = (MemorySegment)createAh.invokeExact(state, pd, ahAttr);
            return new Result(ah.address(), Errnos.read(state));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_create_ah", t);
        }
    }

    /**
     * @param ah an address handle.
     * @return {@code ibv_destroy_ah}: 0 or the errno.
     */
    Result destroyAh(final MemorySegment ah)
    {
        return Downcalls.intCall("ibv_destroy_ah", destroyAh, ah);
    }
}
