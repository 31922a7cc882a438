package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.XrcDomain;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An rdma-core XRC domain ({@code struct ibv_xrcd}, ibv_open_xrcd(3)) opened without a file (fd -1, so a new domain
 * of the context). The XRC SRQs created in it keep it busy: {@code ibv_close_xrcd} answers EBUSY while one lives (the
 * kernel's {@code ib_dealloc_xrcd_user} checks the domain's use count).
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaXrcd implements XrcDomain
{
    /** fd -1: no file, a new domain (ibv_open_xrcd(3)). */
    private static final int NO_FILE = -1;
    /** {@code O_CREAT} of fcntl.h, the oflags a new domain is opened with (as ibv_xsrq_pingpong does). */
    static final int O_CREAT = 0100;

    private final RdmaContext ctx;
    private final MemorySegment xrcd;
    private boolean closed;

    private RdmaXrcd(final RdmaContext ctx, final MemorySegment xrcd)
    {
        this.ctx = ctx;
        this.xrcd = xrcd;
    }

    /**
     * {@code ibv_open_xrcd} with comp_mask FD and OFLAGS, fd -1 and O_CREAT.
     *
     * @param ctx the context.
     * @return the domain.
     * @throws VerbsException the errno the library gave: EOPNOTSUPP when the device has no XRC (no
     *                        {@code open_xrcd} in the extended table; libibverbs answers so without a call), ENOMEM.
     */
    static RdmaXrcd open(final RdmaContext ctx)
    {
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment init = a.allocate(XrcVerbs.IBV_XRCD_INIT_ATTR);
            init.set(JAVA_INT, XrcVerbs.XRCD_INIT_COMP_MASK, XrcVerbs.IBV_XRCD_INIT_ATTR_FD
                | XrcVerbs.IBV_XRCD_INIT_ATTR_OFLAGS);
            init.set(JAVA_INT, XrcVerbs.XRCD_INIT_FD, NO_FILE);
            init.set(JAVA_INT, XrcVerbs.XRCD_INIT_OFLAGS, O_CREAT);
            final Errnos.Result r = ctx.lib().xrcs().openXrcd(ctx.segment(), init);
            if (r.isNull())
            {
                throw new VerbsException("ibv_open_xrcd", r.errno(), ctx.device().name() + ": no XRC domain opened"
                    + (r.errno() == Errno.EOPNOTSUPP.code() ? " (the device has no XRC: IBV_DEVICE_XRC is not in its "
                        + "device_cap_flags; use a device that has it, e.g. mlx4 or mlx5)" : ""));
            }
            return new RdmaXrcd(ctx, r.pointer(XrcVerbs.IBV_XRCD.byteSize()));
        }
    }

    @Override
    public RdmaContext context()
    {
        return ctx;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_close_xrcd}. Idempotent.
     *
     * @throws VerbsException the errno the library gave (EBUSY while an XRC SRQ of the domain lives); the domain
     *                        stays.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = ctx.lib().xrcs().closeXrcd(ctx.segment(), xrcd);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_close_xrcd", r.errno(), this + " stays" + (r.errno() == Errno.EBUSY.code()
                ? ": an XRC SRQ or XRC_RECV QP of it still lives; destroy those first" : ""));
        }
        closed = true;
        ctx.xrcdClosed(this);
    }

    MemorySegment segment()
    {
        return xrcd;
    }

    @Override
    public String toString()
    {
        return "RdmaXrcd[" + ctx.device().name() + (closed ? ", closed" : "") + "]";
    }
}
