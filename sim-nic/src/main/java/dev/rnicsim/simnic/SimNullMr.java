package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.dma.Segment;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A null MR ({@code ibv_alloc_null_mr}, IBV_MR_TYPE_NULL_MR): writes through its lkey are discarded and reads give
 * zeros. It spans the whole address space (length SIZE_MAX), has an lkey and no rkey, and is refused by
 * {@code ibv_rereg_mr} (not a plain MR: IBV_REREG_MR_ERR_INPUT with EINVAL) and, on mlx5, by {@code ibv_bind_mw}
 * (EOPNOTSUPP). mlx5 implements it with the device's dump-fill mkey ({@code mlx5_alloc_null_mr}); the model gives it
 * an mkey of the PD whose one translation entry points at a 4 KiB sink frame the device owns, presents every SGE of
 * it as 4 KiB pieces of that frame, and clears the frame before each use, so reads give zeros and writes vanish.
 *
 * <p>Not thread safe.
 */
final class SimNullMr implements MemoryRegion
{
    private static final int SINK_BYTES = 4096;

    private final SimPd pd;
    private final int lkey;
    private boolean closed;

    private SimNullMr(final SimPd pd, final int lkey)
    {
        this.pd = pd;
        this.lkey = lkey;
    }

    /**
     * ibv_alloc_null_mr on {@code pd}.
     *
     * @throws dev.rnicsim.verbs.VerbsException EOPNOTSUPP when the provider has no null MRs (every driver but mlx5);
     *                                          ENOMEM when the MPT is full. Nothing changes on failure.
     */
    static SimNullMr allocate(final SimPd pd)
    {
        final String verb = "ibv_alloc_null_mr";
        final SimDevice device = pd.context().device();
        if (!device.profile().follows(ProviderRule.NULL_MR))
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " (" + device.profile().driver()
                + ") has no null MRs: the provider lacks alloc_null_mr (mlx5 implements it with its dump-fill mkey)"
                + "; use a device that has null MRs (mlx5)");
        }
        try
        {
            final SimNullMr mr = new SimNullMr(pd, registerSink(pd));
            pd.userAdded(1);
            return mr;
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
    }

    /**
     * An mkey of {@code pd} over the device's sink frame: what a null MR is, and what the device's own discarding
     * buffers use (a tag-matching SRQ's {@link TagArrivals}).
     *
     * @throws TableException when the MPT is full.
     */
    static int registerSink(final SimPd pd)
    {
        final SimDevice device = pd.context().device();
        final int key = device.tables().register(pd.pdNum(), List.of(new DmaRun(device.nullMrSinkFrame(),
            SINK_BYTES)), 0, SINK_BYTES, 0, Access.LOCAL_WRITE.bit()).key();
        device.nullMrAdded(key);
        return key;
    }

    /** Deregisters a key of {@link #registerSink}. */
    static void dropSink(final SimDevice device, final int key)
    {
        device.tables().deregister(key);
        device.nullMrRemoved(key);
    }

    /**
     * The engine segments of an SGE of a null MR: 4 KiB pieces of the sink frame, which is cleared first.
     */
    static void segments(final SimDevice device, final dev.rnicsim.verbs.Sge s, final List<Segment> out)
    {
        device.clearNullMrSink();
        long left = s.lengthBytes();
        while (left > 0)
        {
            final long n = Math.min(left, SINK_BYTES);
            out.add(new Segment(0, n, s.lkey()));
            left -= n;
        }
    }

    /** The sink frame of a device: a pinned page of a process of the device's own. */
    static long sinkFrame(final SimDevice device)
    {
        final UserProcess owner = device.host().host().spawn(device.name() + "-null-mr-sink");
        final long addr = owner.mmapAnonymous(SINK_BYTES);
        final PinnedPages pinned = owner.pinUserPages(addr, SINK_BYTES, true, true);
        return pinned.runs().get(0).physAddr();
    }

    @Override
    public SimPd pd()
    {
        return pd;
    }

    @Override
    public long addr()
    {
        return 0;
    }

    /** @return SIZE_MAX, as an unsigned value. */
    @Override
    public long lengthBytes()
    {
        return -1L;
    }

    @Override
    public long iova()
    {
        return 0;
    }

    @Override
    public int lkey()
    {
        return lkey;
    }

    /** @return 0: a null MR has no rkey. */
    @Override
    public int rkey()
    {
        return 0;
    }

    @Override
    public EnumSet<Access> access()
    {
        return EnumSet.noneOf(Access.class);
    }

    /**
     * @throws ReregException always: IBV_REREG_MR_ERR_INPUT with EINVAL (libibverbs refuses any MR that is not
     *                        IBV_MR_TYPE_MR before the kernel).
     */
    @Override
    public void rereg(final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLengthBytes, final Set<Access> newAccess)
    {
        throw new ReregException(Errno.EINVAL.code(), ReregException.ERR_INPUT, "a null MR (IBV_MR_TYPE_NULL_MR) "
            + "cannot be reregistered: only plain MRs can (ibv_rereg_mr)");
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        pd.context().device().fabric().guardedRun(this::deregister);
    }

    private void deregister()
    {
        if (closed)
        {
            return;
        }
        dropSink(pd.context().device(), lkey);
        pd.userAdded(-1);
        closed = true;
    }

    @Override
    public String toString()
    {
        return "null MR lkey=0x" + Integer.toHexString(lkey);
    }
}
