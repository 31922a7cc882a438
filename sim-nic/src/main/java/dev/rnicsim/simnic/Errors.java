package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.VerbsException;

/**
 * The one place where failures of the host and adapter models become the errno a verb returns. The errno travels
 * intact: the host's and the tables' errno numbers are Linux's, so a verb fails with exactly the number the lower
 * model raised (ENOMEM stays ENOMEM, EFAULT stays EFAULT, EOPNOTSUPP stays EOPNOTSUPP), and the detail travels
 * beside it, never parsed out of a message. Stateless.
 */
final class Errors
{
    private Errors()
    {
    }

    /** @return the verbs errno of a host-kernel failure, number for number. */
    static Errno errno(final KernelException e)
    {
        return Errno.of(e.errno().value());
    }

    /** @return the verbs errno of an adapter-table failure, number for number. */
    static Errno errno(final TableException e)
    {
        return Errno.of(e.errno().value());
    }

    static VerbsException of(final String verb, final KernelException e)
    {
        return new VerbsException(verb, e.errno().value(), e.detail(), e);
    }

    static VerbsException of(final String verb, final TableException e)
    {
        return new VerbsException(verb, e.errno().value(), e.detail(), e);
    }

    /** ibv_rereg_mr's kernel command failed (IBV_REREG_MR_ERR_CMD) because the host refused; errno kept. */
    static ReregException reregCmd(final KernelException e)
    {
        final ReregException r = new ReregException(e.errno().value(), ReregException.ERR_CMD, e.detail());
        r.initCause(e);
        return r;
    }

    /** ibv_rereg_mr's kernel command failed (IBV_REREG_MR_ERR_CMD) because the tables refused; errno kept. */
    static ReregException reregCmd(final TableException e)
    {
        final ReregException r = new ReregException(e.errno().value(), ReregException.ERR_CMD, e.detail());
        r.initCause(e);
        return r;
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
