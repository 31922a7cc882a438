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
    private final SimPd pd;
    private final long addr;
    private final long lengthBytes;
    private final long iova;
    private final int lkey;
    private final int rkey;
    private final EnumSet<Access> access;
    private final PinnedPages pinned;
    private final RegisteredMr registered;
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

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        pd.deregister(this);
    }

    void markClosed()
    {
        closed = true;
    }

    @Override
    public String toString()
    {
        return "MR[addr=0x" + Long.toHexString(addr) + " lengthBytes=" + lengthBytes + " iova=0x"
            + Long.toHexString(iova) + " lkey=0x" + Integer.toHexString(lkey) + " rkey=0x" + Integer.toHexString(rkey)
            + " access=" + access + " pageSizeBytes=" + pageSizeBytes() + " mttEntries=" + mttEntries() + "]";
    }
}
