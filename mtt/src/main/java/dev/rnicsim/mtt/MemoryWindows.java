package dev.rnicsim.mtt;

/**
 * The memory windows of the adapter tables: each an MPT entry of its own (its key shares the MR key space and
 * layout) and, beside it, the window's type and the QP a type 2 window is bound to. A bound window translates
 * through the MTT entries of the MR it is bound to ({@code rxe_bind_mw}, {@code mlx4_mw_bind}); binding, LOCAL_INV
 * and freeing retire its key.
 *
 * <p>Part of {@link AdapterTables} ({@link AdapterTables#windows()}), whose MTT, MPT, translation cache and counts it
 * shares. Not thread safe.
 */
public final class MemoryWindows
{
    /** A memory window's bookkeeping beside its MPT entry. */
    private record Window(int type, int qpn, int mrKey)
    {
    }

    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private final TableCounters counters;
    /** MPT index of each memory window: its type and the QP a type 2 window is bound to. */
    private final LongMap<Window> windows = new LongMap<>();
    /** Windows bound, unbound, allocated or freed: part of {@link AdapterTables#keyChanges()}. */
    private long windowChanges;
    private long windowBinds;

    /**
     * @param mpt         the MPT the windows' entries live in.
     * @param cache       the translation cache that holds their entries.
     * @param variantBits the key's variant width ({@link MKey}).
     * @param counters    the tables' shared counts.
     */
    MemoryWindows(final MptTable mpt, final TranslationCache cache, final int variantBits,
        final TableCounters counters)
    {
        this.mpt = mpt;
        this.cache = cache;
        this.variantBits = variantBits;
        this.counters = counters;
    }

    /**
     * @param index an MPT index.
     * @return true when it holds a window (live or not: the caller checks the key).
     */
    boolean holds(final long index)
    {
        return !windows.isEmpty() && windows.containsKey(index);
    }

    /**
     * The check a type 2 window adds after the PD ({@code rxe_lookup_mw}): presented by another QP than the one it
     * is bound to, it fails with {@link KeyCheck#WRONG_QP}.
     *
     * @param index the MPT index of {@code key}.
     * @param key   the key presented.
     * @param pd    the PD of the QP presenting it.
     * @param qpn   the QP presenting it (-1: none).
     * @return true when {@code key} names a live type 2 window of {@code pd} bound to another QP; an unbound or
     *         invalidated window (bound to no QP) fails the MPT entry's state check instead, as no QP's key.
     */
    boolean wrongQp(final long index, final int key, final int pd, final int qpn)
    {
        if (windows.isEmpty())
        {
            return false;
        }
        final Window w = windows.get(index);
        return w != null && w.type() == 2 && w.qpn() >= 0 && w.qpn() != qpn && mpt.isLiveKey(key) && mpt.entry(key).pd() == pd;
    }

    /**
     * @return windows bound, unbound, allocated or freed since creation.
     */
    long changes()
    {
        return windowChanges;
    }

    /**
     * Allocates a memory window: an MPT entry of its own (so its key shares the MR key space and layout), unbound:
     * state INVALID, length 0, no rights, no MTT entries ({@code mlx4_mw_alloc}, {@code rxe_alloc_mw}).
     *
     * @param pd   protection domain number.
     * @param type 1 or 2.
     * @return the window's key (its rkey).
     * @throws TableException EINVAL for another type; ENOMEM when the MPT is full.
     */
    public int allocate(final int pd, final int type)
    {
        if (type != 1 && type != 2)
        {
            throw new TableException(Errno.EINVAL, "memory window type " + type + ": expected 1 or 2"
                + "; give type 1 or type 2");
        }
        // A window is no MR-cache object: under RECYCLED keys it must not take the last MR's key at its index.
        final int key = mpt.allocate(MptState.INVALID, pd, 0, 1, 0, 12, new MttRange(0, 0, 0), true);
        final int unbound = mpt.rewrite(key, MKey.variant(key, variantBits), MptState.INVALID, pd, 0, 0, 0, 12,
            new MttRange(0, 0, 0));
        windows.put(MKey.index(unbound, variantBits), new Window(type, -1, 0));
        windowChanges++;
        return unbound;
    }

    /**
     * @param key a key.
     * @return true when it names a live memory window in all its bits.
     */
    public boolean isWindow(final int key)
    {
        return mpt.isLiveKey(key) && windows.containsKey(MKey.index(key, variantBits));
    }

    /**
     * Binds a window to a range of a live MR, or unbinds it ({@code lengthBytes} 0), under a new key: the window's
     * index with the new key's variant ({@code ibv_inc_rkey} for type 1, the consumer's byte for type 2). The
     * window's entry then translates through the MR's MTT entries (VA-based: {@code iova} is an address of the
     * MR's iova space). The old key stops validating and the cache drops the window's entry. The semantic checks of
     * a bind (rights, MW_BIND, bounds, state) are the caller's; these are the table's own.
     *
     * @param mwKey       the window's current key.
     * @param newKey      the window's key after the bind: same index.
     * @param mrKey       the MR's key (ignored when unbinding).
     * @param qpn         the QP a type 2 window is bound to (-1 for type 1).
     * @param iova        first address of the window, in the MR's iova space.
     * @param lengthBytes window length in bytes; 0 unbinds.
     * @param access      the window's rights ({@link AccessFlags} remote bits).
     * @return the number of cached entries the bind dropped.
     * @throws TableException EINVAL when mwKey names no live window, newKey has another index, mrKey names no
     *                        live MR, or the range is outside the MR.
     */
    public long bind(final int mwKey, final int newKey, final int mrKey, final int qpn, final long iova,
        final long lengthBytes, final int access)
    {
        final long index = MKey.index(mwKey, variantBits);
        final Window w = windows.get(index);
        if (w == null || !mpt.isLiveKey(mwKey))
        {
            throw new TableException(Errno.EINVAL, "bind: key " + MKey.toHex(mwKey) + " names no live window"
                + "; bind a window that is allocated and not yet freed");
        }
        if (MKey.index(newKey, variantBits) != index)
        {
            throw new TableException(Errno.EINVAL, "bind: new key " + MKey.toHex(newKey) + " must keep the index of "
                + MKey.toHex(mwKey) + " (only the low byte may change)"
                + "; give a key of the same index");
        }
        final MptEntry mw = mpt.entry(mwKey);
        MptEntry mr = null;
        if (lengthBytes != 0)
        {
            mr = mpt.isLiveKey(mrKey) && !windows.containsKey(MKey.index(mrKey, variantBits)) ? mpt.entry(mrKey) : null;
            if (mr == null)
            {
                throw new TableException(Errno.EINVAL, "bind: key " + MKey.toHex(mrKey) + " names no live MR"
                    + "; bind to a registered MR");
            }
            final long offset = iova - mr.iova();
            if (lengthBytes < 0 || Long.compareUnsigned(offset, mr.lengthBytes()) >= 0
                || Long.compareUnsigned(lengthBytes, mr.lengthBytes() - offset) > 0)
            {
                throw new TableException(Errno.EINVAL, "bind: window 0x" + Long.toHexString(iova) + "+" + lengthBytes
                    + " is outside the MR 0x" + Long.toHexString(mr.iova()) + "+" + mr.lengthBytes()
                    + "; bind a range inside the MR");
            }
        }
        final long dropped = cache.invalidate(index, 0, 0);
        counters.invalidations++;
        windowBinds++;
        if (lengthBytes == 0)
        {
            mpt.rewrite(mwKey, MKey.variant(newKey, variantBits), MptState.INVALID, mw.pd(), 0, 0, 0, 12,
                new MttRange(0, 0, 0));
            windows.put(index, new Window(w.type(), -1, 0));
            windowChanges++;
            return dropped;
        }
        final int shift = mr.pageShift();
        final long first = mr.mtt().firstEntry() + (iova >>> shift) - (mr.iova() >>> shift);
        mpt.rewrite(mwKey, MKey.variant(newKey, variantBits), MptState.VALID, mw.pd(), iova, lengthBytes, access,
            shift, new MttRange(first, 0, 0));
        windows.put(index, new Window(w.type(), w.type() == 2 ? qpn : -1, mrKey));
        windowChanges++;
        return dropped;
    }

    /**
     * Invalidates a bound window (LOCAL_INV or a received SEND_WITH_INV of a type 2 window, {@code
     * rxe_invalidate_mw}): state INVALID, its key unchanged, the cache drops its entry.
     *
     * @param mwKey the window's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when mwKey names no live window.
     */
    public long invalidate(final int mwKey)
    {
        final long index = MKey.index(mwKey, variantBits);
        final Window w = windows.get(index);
        if (w == null || !mpt.isLiveKey(mwKey))
        {
            throw new TableException(Errno.EINVAL, "invalidate: key " + MKey.toHex(mwKey) + " names no live window"
                + "; invalidate a window that is allocated and not yet freed");
        }
        final MptEntry mw = mpt.entry(mwKey);
        mpt.rewrite(mwKey, MKey.variant(mwKey, variantBits), MptState.INVALID, mw.pd(), 0, 0, 0, 12,
            new MttRange(0, 0, 0));
        windows.put(index, new Window(w.type(), -1, 0));
        windowChanges++;
        counters.invalidations++;
        return cache.invalidate(index, 0, 0);
    }

    /**
     * Frees a window's MPT entry (dealloc): its key stops validating.
     *
     * @param mwKey the window's key.
     * @return the number of cached entries dropped.
     * @throws TableException EINVAL when mwKey names no live window.
     */
    public long free(final int mwKey)
    {
        final long index = MKey.index(mwKey, variantBits);
        if (!windows.containsKey(index) || !mpt.isLiveKey(mwKey))
        {
            throw new TableException(Errno.EINVAL, "free: key " + MKey.toHex(mwKey) + " names no live window"
                + "; free each window once");
        }
        windows.remove(index);
        windowChanges++;
        mpt.forgetHistory(mwKey);
        mpt.release(mwKey);
        counters.invalidations++;
        return cache.invalidate(index, 0, 0);
    }

    /**
     * @return live memory windows (they hold MPT entries too).
     */
    public int count()
    {
        return windows.size();
    }

    /**
     * @return window binds and unbinds since creation.
     */
    public long binds()
    {
        return windowBinds;
    }
}
