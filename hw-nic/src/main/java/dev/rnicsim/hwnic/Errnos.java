package dev.rnicsim.hwnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * errno capture for downcalls: every handle of the binding is linked with {@code captureCallState("errno")}, so
 * the JVM saves errno right after the native call returns, before anything else (the JIT, GC, another native call)
 * can overwrite it; the binding reads it from that state segment, never from a later call.
 *
 * <p>Thread safe.
 */
// Restricted java.lang.foreign methods (linking, library lookup, sizing native pointers) are this class's purpose.
@SuppressWarnings("restricted")
final class Errnos
{
    /** The linker option every downcall of the binding uses. */
    static final Linker.Option CAPTURE = Linker.Option.captureCallState("errno");

    private static final StructLayout STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = STATE.varHandle(PathElement.groupElement("errno"));

    private Errnos()
    {
    }

    /**
     * A call's result and the errno it left.
     *
     * @param value the return value (an address for functions returning a pointer).
     * @param errno errno right after the call; meaningful only when the value says the call failed.
     */
    record Result(long value, int errno)
    {
        /**
         * @return true when the function returned NULL (for functions returning a pointer).
         */
        boolean isNull()
        {
            return value == 0;
        }

        /**
         * @param byteSize the size of the struct the pointer points at.
         * @return the returned pointer as a segment of that size.
         */
        MemorySegment pointer(final long byteSize)
        {
            return MemorySegment.ofAddress(value).reinterpret(byteSize);
        }
    }

    /**
     * @param arena where the state lives for the call.
     * @return a fresh capture-state segment to pass right after the target address.
     */
    static MemorySegment state(final Arena arena)
    {
        return arena.allocate(STATE);
    }

    /**
     * The errno of a verb that returns 0 or an error code: libibverbs returns a positive errno, some providers a
     * negative one (rxe's {@code post_one_send} returns {@code -EINVAL}), and -1 means "see errno".
     *
     * @param rc       what the function returned.
     * @param captured the errno captured after the call.
     * @return the errno (0 for success).
     */
    static int errnoOf(final int rc, final int captured)
    {
        if (rc == 0)
        {
            return 0;
        }
        if (rc == -1)
        {
            return captured != 0 ? captured : Errno.EIO.code();
        }
        return rc < 0 ? -rc : rc;
    }

    /**
     * @param state a capture-state segment a downcall filled.
     * @return the errno the call left.
     */
    static int read(final MemorySegment state)
    {
        return (int)ERRNO.get(state, 0L);
    }

    /**
     * @param verb the native function.
     * @param t    what a method-handle invocation threw (a linkage bug, never a native error).
     * @return an exception to throw.
     */
    static RuntimeException unexpected(final String verb, final Throwable t)
    {
        if (t instanceof RuntimeException r)
        {
            return r;
        }
        if (t instanceof Error e)
        {
            throw e;
        }
        return new VerbsException(verb, Errno.EINVAL.code(), "the downcall failed: " + t, t);
    }
}
