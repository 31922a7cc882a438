package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.handle;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * libibverbs' fork support (ibv_fork_init(3), ibv_is_fork_initialized(3)): process-wide functions of the library,
 * not of a context. Thread safe (the handles are immutable).
 */
final class ForkVerbs
{
    private final MethodHandle forkInit;
    private final MethodHandle isForkInitialized;

    ForkVerbs(final String libraryName, final SymbolLookup lookup)
    {
        forkInit = handle(lookup, libraryName, "ibv_fork_init", FunctionDescriptor.of(JAVA_INT));
        isForkInitialized = handle(lookup, libraryName, "ibv_is_fork_initialized", FunctionDescriptor.of(JAVA_INT));
    }

    /**
     * {@code ibv_fork_init()}.
     *
     * @return 0, or the errno it returns (EINVAL when memory was registered before and the kernel does not copy
     *         pinned pages at fork).
     */
    int forkInit()
    {
        try (Arena arena = Arena.ofConfined())
        {
            return (int)forkInit.invokeExact(Errnos.state(arena));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_fork_init", t);
        }
    }

    /**
     * {@code ibv_is_fork_initialized()}.
     *
     * @return {@code enum ibv_fork_status}: 0 DISABLED, 1 ENABLED, 2 UNNEEDED.
     */
    int isForkInitialized()
    {
        try (Arena arena = Arena.ofConfined())
        {
            return (int)isForkInitialized.invokeExact(Errnos.state(arena));
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected("ibv_is_fork_initialized", t);
        }
    }
}
