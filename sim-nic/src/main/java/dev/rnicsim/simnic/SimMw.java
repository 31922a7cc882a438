package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwType;
import java.util.EnumSet;
import java.util.Set;

/**
 * A simulated memory window: an MPT entry of its own that, once bound, translates a range of an MR through the MR's
 * MTT entries with the window's rights. It holds a reference on the MR while bound (the MR cannot be deregistered)
 * and, for type 2, on the QP it was bound through.
 *
 * <p>Not thread safe.
 */
public final class SimMw implements MemoryWindow
{
    private final SimPd pd;
    private final MwType type;
    /** The key in the device's tables (changes with every bind). */
    private int tableKey;
    /** The rkey the application sees: for type 1, updated at post time by ibv_bind_mw (ibv_inc_rkey). */
    private int rkey;
    private SimMr mr;
    private SimQp qp;
    private long addr;
    private long lengthBytes;
    private Set<Access> access = EnumSet.noneOf(Access.class);
    private boolean closed;

    SimMw(final SimPd pd, final MwType type, final int key)
    {
        this.pd = pd;
        this.type = type;
        this.tableKey = key;
        this.rkey = key;
    }

    @Override
    public SimPd pd()
    {
        return pd;
    }

    @Override
    public MwType type()
    {
        return type;
    }

    @Override
    public int rkey()
    {
        return rkey;
    }

    void rkey(final int newRkey)
    {
        rkey = newRkey;
    }

    @Override
    public void setRkey(final int newRkey)
    {
        rkey = newRkey;
    }

    int tableKey()
    {
        return tableKey;
    }

    /**
     * @return the MR it is bound to, or null when unbound.
     */
    public SimMr boundMr()
    {
        return mr;
    }

    /**
     * @return the QP a type 2 window is bound to, or null.
     */
    public SimQp boundQp()
    {
        return qp;
    }

    /**
     * @return the first byte of the window in the MR's address space (0 when unbound).
     */
    public long addr()
    {
        return addr;
    }

    /**
     * @return the window's length in bytes (0 when unbound).
     */
    public long lengthBytes()
    {
        return lengthBytes;
    }

    /**
     * @return the window's rights.
     */
    public Set<Access> access()
    {
        return access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
    }

    /**
     * @return true while bound to an MR.
     */
    public boolean isBound()
    {
        return mr != null;
    }

    /** Records a bind (or, with a null MR, an unbind or invalidation) done in the tables. */
    void bound(final int newTableKey, final SimMr newMr, final SimQp newQp, final long newAddr, final long newLength,
        final Set<Access> newAccess)
    {
        if (mr != null)
        {
            mr.windowReleased();
        }
        tableKey = newTableKey;
        rkey = newTableKey;
        mr = newMr;
        qp = newQp;
        addr = newAddr;
        lengthBytes = newLength;
        access = newAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(newAccess);
        if (newMr != null)
        {
            newMr.windowAcquired();
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
        pd.context().device().fabric().guardedRun(this::dealloc);
    }

    private void dealloc()
    {
        if (closed)
        {
            return;
        }
        pd.deallocMw(this);
    }

    void markClosed()
    {
        closed = true;
    }

    @Override
    public String toString()
    {
        return "MW[type=" + type.code() + " rkey=0x" + Integer.toHexString(rkey) + (mr == null ? " unbound"
            : " addr=0x" + Long.toHexString(addr) + " length=" + lengthBytes + " access=" + access + " mr=0x"
            + Integer.toHexString(mr.lkey())) + "]";
    }
}
