package dev.rnicsim.simnic;

import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.pagetable.PinnedPages;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import java.util.EnumSet;
import java.util.Set;

/**
 * A simulated MR: its pin, its MTT range and its keys.
 *
 * <p>Not thread safe.
 */
public final class SimMr implements MemoryRegion
{
    private SimPd pd;
    private long addr;
    private long lengthBytes;
    private long iova;
    private int lkey;
    private int rkey;
    private EnumSet<Access> access;
    private PinnedPages pinned;
    private RegisteredMr registered;
    private int boundWindows;
    private boolean closed;

    SimMr(final SimPd pd, final long addr, final long lengthBytes, final long iova, final int lkey, final int rkey,
        final Set<Access> access, final PinnedPages pinned, final RegisteredMr registered)
    {
        this.pd = pd;
        this.addr = addr;
        this.lengthBytes = lengthBytes;
        this.iova = iova;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        this.pinned = pinned;
        this.registered = registered;
    }

    @Override
    public SimPd pd()
    {
        return pd;
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
        return iova;
    }

    @Override
    public int lkey()
    {
        return lkey;
    }

    @Override
    public int rkey()
    {
        return rkey;
    }

    @Override
    public EnumSet<Access> access()
    {
        return EnumSet.copyOf(access.isEmpty() ? EnumSet.noneOf(Access.class) : access);
    }

    /**
     * @return the MR page size the driver chose ({@code ib_umem_find_best_pgsz}), in bytes.
     */
    public long pageSizeBytes()
    {
        return registered.pageSizeBytes();
    }

    /**
     * @return MTT entries holding its translation (DMA blocks of the MR page size).
     */
    public long mttEntries()
    {
        return registered.mtt().entries();
    }

    /**
     * @return MTT entries reserved for it, after the allocator's rounding.
     */
    public long mttEntriesReserved()
    {
        return registered.mtt().reservedEntries();
    }

    /**
     * @return 4 KiB pages it pins.
     */
    public long pinnedPages()
    {
        return pinned.pageCount();
    }

    PinnedPages pinned()
    {
        return pinned;
    }

    /**
     * @return its pin: the process, the first page, the page count and the physical runs behind its pages, in order.
     */
    public PinnedPages pin()
    {
        return pinned;
    }

    /**
     * @return memory windows bound to it now.
     */
    public int boundWindows()
    {
        return boundWindows;
    }

    void windowAcquired()
    {
        boundWindows++;
    }

    void windowReleased()
    {
        boundWindows--;
    }

    RegisteredMr registered()
    {
        return registered;
    }

    /** Takes the state a successful rereg gave it. */
    void reregistered(final SimPd newPd, final long newAddr, final long newLength, final long newIova,
        final int newLkey, final int newRkey, final Set<Access> newAccess, final PinnedPages newPinned,
        final RegisteredMr newRegistered)
    {
        pd = newPd;
        addr = newAddr;
        lengthBytes = newLength;
        iova = newIova;
        lkey = newLkey;
        rkey = newRkey;
        access = newAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(newAccess);
        pinned = newPinned;
        registered = newRegistered;
    }

    @Override
    public void rereg(final Set<dev.rnicsim.verbs.ReregFlag> flags, final dev.rnicsim.verbs.ProtectionDomain newPd,
        final long newAddr, final long newLengthBytes, final Set<Access> newAccess)
    {
        pd.context().device().fabric().guardedRun(() -> reregister(flags, newPd, newAddr, newLengthBytes,
            newAccess));
    }

    private void reregister(final Set<dev.rnicsim.verbs.ReregFlag> flags,
        final dev.rnicsim.verbs.ProtectionDomain newPd, final long newAddr, final long newLengthBytes,
        final Set<Access> newAccess)
    {
        // libibverbs ibv_rereg_mr: after its input checks, MADV_DONTFORK the new range (IBV_REREG_MR_ERR_DONT_FORK_NEW
        // when refused); after the kernel's rereg MADV_DOFORK the old range, or the new one when the kernel failed.
        final boolean translation = !closed && flags != null && !NullElements.any(flags)
            && flags.contains(dev.rnicsim.verbs.ReregFlag.CHANGE_TRANSLATION) && newAddr != 0 && newLengthBytes != 0
            && (newAccess == null || newAccess.isEmpty() || flags.contains(dev.rnicsim.verbs.ReregFlag.CHANGE_ACCESS));
        final ForkSafety fork = pd.context().device().host().forkSafety(pd.context().process());
        final long workBefore = fork.workNs(pd.context().device().fabric().costModel());
        if (translation)
        {
            try
            {
                fork.dontforkRange("ibv_rereg_mr", newAddr, newLengthBytes);
            }
            catch (final dev.rnicsim.verbs.VerbsException e)
            {
                throw new dev.rnicsim.verbs.ReregException(e.errno(), dev.rnicsim.verbs.ReregException.ERR_DONT_FORK_NEW,
                    e.detail());
            }
        }
        final long oldAddr = addr;
        final long oldLength = lengthBytes;
        try
        {
            pd.rereg(this, flags, newPd, newAddr, newLengthBytes, newAccess);
        }
        catch (final RuntimeException e)
        {
            if (translation)
            {
                fork.doforkRange(newAddr, newLengthBytes);
            }
            throw e;
        }
        if (translation)
        {
            fork.doforkRange(oldAddr, oldLength);
            SimPd.madviseSpan(pd.context().device(), fork, workBefore, "MADV_DONTFORK new, MADV_DOFORK old");
        }
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        final EngineThread held = pd.context().device().fabric().enter();
        try
        {
            if (closed)
            {
                return;
            }
            final String refused = MrWindows.deregRefusal(this);
            if (refused != null)
            {
                throw Errors.invalid("ibv_dereg_mr", refused);
            }
            pd.deregister(this);
            MrWindows.orphan(this);
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    void markClosed()
    {
        closed = true;
    }

    @Override
    public String toString()
    {
        return "MR[addr=0x" + Long.toHexString(addr) + " length=" + lengthBytes + " iova=0x"
            + Long.toHexString(iova) + " lkey=0x" + Integer.toHexString(lkey) + " rkey=0x" + Integer.toHexString(rkey)
            + " access=" + access + " pageSizeBytes=" + pageSizeBytes() + " mttEntries=" + mttEntries() + "]";
    }
}
