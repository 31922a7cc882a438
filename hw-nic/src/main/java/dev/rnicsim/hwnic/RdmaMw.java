package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.MemorySegment;

/**
 * An rdma-core memory window ({@code struct ibv_mw}). Its rkey is the native struct's {@code rkey} member: the
 * provider writes it when a type 1 bind is posted; for a type 2 window the backend writes the work request's new
 * rkey there when the BIND_MW is posted (rxe names the window by that member in the next bind).
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaMw implements MemoryWindow
{
    private final RdmaPd pd;
    private final MemorySegment mw;
    private final MwType type;
    private int lastRkey;
    private boolean closed;

    RdmaMw(final RdmaPd pd, final MemorySegment mw, final MwType type)
    {
        this.pd = pd;
        this.mw = mw;
        this.type = type;
        this.lastRkey = mw.get(JAVA_INT, IbvStructs.MW_RKEY);
    }

    @Override
    public ProtectionDomain pd()
    {
        return pd;
    }

    @Override
    public MwType type()
    {
        return type;
    }

    /**
     * @return the native struct's rkey; once deallocated, the last one seen (the struct is freed).
     */
    @Override
    public int rkey()
    {
        if (!closed)
        {
            lastRkey = mw.get(JAVA_INT, IbvStructs.MW_RKEY);
        }
        return lastRkey;
    }

    @Override
    public void setRkey(final int rkey)
    {
        if (!closed)
        {
            mw.set(JAVA_INT, IbvStructs.MW_RKEY, rkey);
        }
        lastRkey = rkey;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_dealloc_mw} (inline: ops.dealloc_mw). Idempotent.
     *
     * @throws VerbsException the provider's errno; the window stays allocated.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final int rkey = rkey();
        final Errnos.Result r = pd.context().lib().registration().deallocMw(pd.context().segment(), mw);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_dealloc_mw", r.errno(), "window rkey=0x" + Integer.toHexString(rkey));
        }
        closed = true;
        pd.mwClosed(this);
    }

    MemorySegment segment()
    {
        return mw;
    }

    /**
     * @return the {@code pd} member of the native window, as verbs.h's ibv_bind_mw compares it.
     */
    long nativePd()
    {
        return mw.get(ADDRESS, IbvStructs.MW_PD).address();
    }

    @Override
    public String toString()
    {
        return "RdmaMw[" + type + (closed ? ", closed" : " rkey=0x" + Integer.toHexString(rkey())) + "]";
    }
}
