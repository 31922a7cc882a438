package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.PhysRun;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated fast-registration MR: MTT room for {@code maxNumSg} pages reserved at allocation, pages pinned by
 * {@link #mapSg}, made VALID under a new key by a REG_MR work request and INVALID again by LOCAL_INV or a received
 * SEND_WITH_INV (rxe_mr.c {@code rxe_reg_fast_mr}, {@code rxe_invalidate_mr}).
 *
 * <p>Not thread safe.
 */
public final class SimFastRegMr implements FastRegMr
{
    private final SimPd pd;
    private final int maxNumSg;
    private int key;
    private PinnedPages pinned;
    private long addr;
    private long lengthBytes;
    private EnumSet<Access> access = EnumSet.noneOf(Access.class);
    private boolean valid;
    private boolean closed;

    SimFastRegMr(final SimPd pd, final int maxNumSg, final int key)
    {
        this.pd = pd;
        this.maxNumSg = maxNumSg;
        this.key = key;
    }

    @Override
    public SimPd pd()
    {
        return pd;
    }

    @Override
    public int maxNumSg()
    {
        return maxNumSg;
    }

    @Override
    public int mapSg(final long newAddr, final long newLengthBytes)
    {
        final String verb = "ib_map_mr_sg";
        if (closed)
        {
            throw Errors.invalid(verb, "the MR is deregistered"
                + " (ibv_dereg_mr released it); allocate a new MR with ibv_alloc_mr");
        }
        if (valid)
        {
            throw Errors.invalid(verb, "MR 0x" + Integer.toHexString(key) + " is VALID: invalidate it first");
        }
        if (newLengthBytes <= 0 || newAddr + newLengthBytes < newAddr)
        {
            throw Errors.invalid(verb, "length=" + newLengthBytes + " must be positive and not wrap");
        }
        final long pages = ((newAddr + newLengthBytes - 1) >>> 12) - (newAddr >>> 12) + 1;
        if (pages > maxNumSg)
        {
            throw Errors.invalid(verb, pages + " pages > max_num_sg=" + maxNumSg
                + "; allocate the MR with a larger max_num_sg or map fewer pages");
        }
        final PinnedPages now;
        try
        {
            now = pd.context().process().pinUserPages(newAddr, newLengthBytes, true, true);
        }
        catch (final KernelException e)
        {
            throw Errors.of(verb, e);
        }
        unpin();
        pinned = now;
        pd.context().device().count(SimCounter.PINNED_BYTES, now.lengthBytes());
        addr = newAddr;
        lengthBytes = newLengthBytes;
        return (int)pages;
    }

    /** The DMA runs of the pages mapped, or null when none are. */
    List<DmaRun> runs()
    {
        if (pinned == null)
        {
            return null;
        }
        final List<DmaRun> runs = new ArrayList<>(pinned.runs().size());
        for (final PhysRun r : pinned.runs())
        {
            runs.add(new DmaRun(r.physAddr(), r.lengthBytes()));
        }
        return runs;
    }

    void registered(final int newKey, final Set<Access> newAccess)
    {
        key = newKey;
        access = newAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(newAccess);
        valid = true;
    }

    void invalidated()
    {
        valid = false;
    }

    int key()
    {
        return key;
    }

    private void unpin()
    {
        if (pinned != null)
        {
            pinned.process().unpinUserPages(pinned);
            pd.context().device().count(SimCounter.PINNED_BYTES, -pinned.lengthBytes());
            pinned = null;
        }
    }

    @Override
    public boolean isValid()
    {
        return valid;
    }

    @Override
    public long addr()
    {
        return addr;
    }

    @Override
    public long lengthBytes()
    {
        return lengthBytes;
    }

    @Override
    public long iova()
    {
        return addr;
    }

    @Override
    public int lkey()
    {
        return key;
    }

    @Override
    public int rkey()
    {
        return key;
    }

    @Override
    public EnumSet<Access> access()
    {
        return access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
    }

    @Override
    public void rereg(final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLengthBytes, final Set<Access> newAccess)
    {
        throw new ReregException(dev.rnicsim.verbs.Errno.EINVAL.code(), ReregException.ERR_INPUT,
            "a fast-registration MR is not a plain user MR (ibv_rereg_mr refuses it)"
            + "; deregister it and allocate a new one with ibv_alloc_mr");
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
        pd.deallocFastReg(this);
        unpin();
        closed = true;
    }

    @Override
    public String toString()
    {
        return "FastRegMr[key=0x" + Integer.toHexString(key) + " maxNumSg=" + maxNumSg + (valid ? " VALID" : " INVALID")
            + " addr=0x" + Long.toHexString(addr) + " length=" + lengthBytes + "]";
    }

    /** Rejects a use of a deregistered MR. */
    void checkOpen(final String verb)
    {
        if (closed)
        {
            throw new VerbsException(verb, dev.rnicsim.verbs.Errno.EINVAL.code(), "the MR is deregistered"
                + " (ibv_dereg_mr released it); allocate a new MR with ibv_alloc_mr");
        }
    }
}
