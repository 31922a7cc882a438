package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;

/**
 * Turns failures of the host and adapter models into the errno a verb returns. Stateless.
 */
final class Errors
{
    private Errors()
    {
    }

    static VerbsException of(final String verb, final KernelException e)
    {
        return new VerbsException(verb, e.errno().value(), withoutPrefix(e.getMessage(), e.errno().name()), e);
    }

    static VerbsException of(final String verb, final TableException e)
    {
        return new VerbsException(verb, e.errno().value(), withoutPrefix(e.getMessage(), e.errno().name()), e);
    }

    /** The lower models start their messages with the errno name, which VerbsException adds itself. */
    private static String withoutPrefix(final String message, final String errnoName)
    {
        final String prefix = errnoName + ": ";
        return message != null && message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    }

    static VerbsException invalid(final String verb, final String message)
    {
        return new VerbsException(verb, Errno.EINVAL.code(), message);
    }

    static VerbsException of(final String verb, final Errno errno, final String message)
    {
        return new VerbsException(verb, errno.code(), message);
    }
}
