package dev.rnicsim.mtt;

/**
 * The on-demand-paging MRs of the adapter tables: explicit ODP MRs ({@code create_user_odp_mr}: MTT entries for the
 * whole range, every one starting zapped) and implicit ones ({@code mlx5_ib_alloc_implicit_mr}: a parent over the
 * address space whose 1 GiB slots get a child with its own MTT entries on first fault). Faults and prefetches map
 * blocks ({@code mlx5r_umr_update_xlt}); MMU-notifier invalidations zap them ({@code mlx5_ib_invalidate_range}).
 *
 * <p>Part of {@link AdapterTables} ({@link AdapterTables#onDemand()}), whose MTT, MPT, translation cache and counts
 * it shares. Not thread safe.
 */
public final class OnDemandPaging
{
    /** {@link #implicitEntry}: the index holds no implicit ODP MR. */
    static final long NOT_IMPLICIT = -1;
    /** {@link #implicitEntry}: the implicit MR has no child in the address's 1 GiB slot. */
    static final long NO_CHILD = -2;

    /** log2 of the part of the address space one child of an implicit ODP MR covers: 1 GiB
     * ({@code MLX5_IMR_MTT_SIZE}, drivers/infiniband/hw/mlx5/odp.c). */
    public static final int IMPLICIT_CHILD_SHIFT = 30;
    /** MTT entries of one implicit child: one per 4 KiB page of its 1 GiB ({@code MLX5_IMR_MTT_ENTRIES}). */
    public static final long IMPLICIT_CHILD_ENTRIES = 1L << (IMPLICIT_CHILD_SHIFT - 12);

    private final Mtt mtt;
    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private final TableCounters counters;
    /** MPT index of each on-demand-paging MR. */
    private final LongMap<Odp> odp = new LongMap<>();

    /** An ODP MR's bookkeeping: its page shift, and for an implicit MR the child of each 1 GiB slot. */
    private record Odp(boolean implicit, int pageShift, LongMap<Child> children)
    {
    }

    /** One child of an implicit ODP MR: its MTT entries and how many of them are present now. */
    private static final class Child
    {
        final MttRange range;
        long present;

        Child(final MttRange range)
        {
            this.range = range;
        }
    }

    /**
     * @param mtt         the MTT the MRs' entries (and implicit children's) are reserved in.
     * @param mpt         the MPT their entries live in.
     * @param cache       the translation cache that holds their entries.
     * @param variantBits the key's variant width ({@link MKey}).
     * @param counters    the tables' shared counts.
     */
    OnDemandPaging(final Mtt mtt, final MptTable mpt, final TranslationCache cache, final int variantBits,
        final TableCounters counters)
    {
        this.mtt = mtt;
        this.mpt = mpt;
        this.cache = cache;
        this.variantBits = variantBits;
        this.counters = counters;
    }

    /**
     * @param index an MPT index.
     * @return true when it holds an ODP MR (live or not: the caller checks the key).
     */
    boolean holds(final long index)
    {
        return !odp.isEmpty() && odp.containsKey(index);
    }

    /**
     * The step of a translation through an implicit ODP MR: the parent's KSM entry of the 1 GiB slot, then the
     * child's MTT entry of the 4 KiB page.
     *
     * @param index the MPT index of the key presented.
     * @param at    the address whose page is translated.
     * @return the child's MTT index of that page; {@link #NOT_IMPLICIT} when the index holds no implicit ODP MR;
     * {@link #NO_CHILD} when the slot has no child.
     */
    long implicitEntry(final long index, final long at)
    {
        final Odp o = odp.get(index);
        if (o == null || !o.implicit())
        {
            return NOT_IMPLICIT;
        }
        final Child c = o.children().get(at >>> IMPLICIT_CHILD_SHIFT);
        if (c == null)
        {
            return NO_CHILD;
        }
        return c.range.firstEntry() + ((at & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12);
    }

    /**
     * Forgets the ODP MR at an index, for its deregistration; an implicit one is released here: its parent's
     * cached entry and every child's entries dropped, the children's MTT entries freed, its MPT entry released.
     *
     * @param key   the MR's key, live.
     * @param index its MPT index.
     * @return the number of cached entries dropped for an implicit MR; -1 when the index held no implicit MR (the
     * caller then deregisters it as any MR with MTT entries of its own).
     */
    long forget(final int key, final long index)
    {
        final Odp o = odp.isEmpty() ? null : odp.remove(index);
        if (o == null || !o.implicit())
        {
            return -1;
        }
        long dropped = cache.invalidate(index, 0, 0);
        final LongMap<Child> children = o.children();
        for (int i = 0; i < children.slots(); i++)
        {
            final Child c = children.valueAt(i);
            if (c != null)
            {
                dropped += cache.invalidate(index, c.range.firstEntry(), c.range.entries());
                mtt.free(c.range);
                counters.entriesZapped += c.present;
            }
        }
        mpt.release(key);
        return dropped;
    }

    /**
     * Registers an explicit on-demand-paging MR ({@code create_user_odp_mr}): MTT entries for every block of the
     * range and a VALID MPT entry, but no translation: every entry starts zapped, so the first access to a block
     * finds it not present ({@link KeyCheck#NOT_PRESENT}) and the driver maps it with {@link #map}.
     *
     * @param pd          protection domain number.
     * @param lengthBytes MR length in bytes, more than 0.
     * @param iova        first address of the MR.
     * @param access      access bits ({@link AccessFlags}).
     * @param pageShift   log2 of the MR page size: 12, or the huge-page shift of an IBV_ACCESS_HUGETLB MR.
     * @return the key, page size and MTT range.
     * @throws TableException EINVAL for refused access bits, an empty or wrapping range, or a page shift outside
     *                        12-30; ENOMEM when the MTT or the MPT is full. Nothing changes on failure.
     */
    public RegisteredMr register(final int pd, final long lengthBytes, final long iova, final int access,
        final int pageShift)
    {
        MrRegistrations.checkAccess(access);
        final long last = iova + lengthBytes - 1;
        if (lengthBytes <= 0 || Long.compareUnsigned(last, iova) < 0 || pageShift < 12 || pageShift > 30)
        {
            throw new TableException(Errno.EINVAL, "ODP MR iova 0x" + Long.toHexString(iova) + "+" + lengthBytes
                + " page shift " + pageShift + ": empty, wrapping, or a page shift outside 12-30"
                + "; give a non-empty range and a page shift from 12 to 30");
        }
        final long blocks = (last >>> pageShift) - (iova >>> pageShift) + 1;
        final MttRange range = mtt.allocate(blocks);
        final int key;
        try
        {
            key = mpt.allocate(MptState.VALID, pd, iova, lengthBytes, access, pageShift, range);
        }
        catch (final TableException e)
        {
            mtt.undoAllocate(range);
            throw e;
        }
        odp.put(MKey.index(key, variantBits), new Odp(false, pageShift, null));
        return new RegisteredMr(key, 1L << pageShift, range);
    }

    /**
     * Registers an implicit ODP MR over the first {@code lengthBytes} of the address space, iova 0
     * ({@code mlx5_ib_alloc_implicit_mr}): a parent entry whose 1 GiB slots point at no child yet and no MTT entries
     * of its own (the parent is an indirect KSM mkey). A child with {@link #IMPLICIT_CHILD_ENTRIES} MTT entries is
     * created by the first {@link #map} in its slot and freed when its last entry is zapped.
     *
     * @param pd          protection domain number.
     * @param lengthBytes bytes of address space covered (the user address space), more than 0.
     * @param access      access bits.
     * @return the key.
     * @throws TableException EINVAL for refused access bits or a non-positive length; ENOMEM when the MPT is full.
     */
    public int registerImplicit(final int pd, final long lengthBytes, final int access)
    {
        MrRegistrations.checkAccess(access);
        if (lengthBytes <= 0)
        {
            throw new TableException(Errno.EINVAL, "implicit ODP MR length " + lengthBytes + " must be positive"
                + "; give a length of one byte or more");
        }
        final int key = mpt.allocate(MptState.VALID, pd, 0, lengthBytes, access, IMPLICIT_CHILD_SHIFT,
            new MttRange(0, 0, 0));
        odp.put(MKey.index(key, variantBits), new Odp(true, 12, new LongMap<>()));
        return key;
    }

    /**
     * @return true when any on-demand-paging MR is live.
     */
    public boolean any()
    {
        return !odp.isEmpty();
    }

    /**
     * @param key a key.
     * @return true when it names a live on-demand-paging MR in all its bits.
     */
    public boolean isOnDemand(final int key)
    {
        return !odp.isEmpty() && odp.containsKey(MKey.index(key, variantBits)) && mpt.isLiveKey(key);
    }

    /**
     * @param key a key.
     * @return true when it names a live implicit ODP MR.
     */
    public boolean isImplicit(final int key)
    {
        final Odp o = odp.isEmpty() ? null : odp.get(MKey.index(key, variantBits));
        return o != null && o.implicit() && mpt.isLiveKey(key);
    }

    /**
     * Finds the first byte of a range of an ODP MR whose block the device cannot access now: not present, or
     * read-only for a write. Reads the table only (no cache access): it stands for the device meeting the missing
     * entry while it walks the range.
     *
     * @param key         a live ODP MR's key.
     * @param iova        first address, inside the MR.
     * @param lengthBytes bytes, more than 0, inside the MR.
     * @param write       the access writes.
     * @return the first such address (at least {@code iova}), or -1 when every block is mapped for the access.
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public long firstUnmapped(final int key, final long iova, final long lengthBytes, final boolean write)
    {
        final Odp o = odpMr(key, "fault");
        final long end = iova + lengthBytes;
        if (o.implicit())
        {
            long page = iova & ~0xfffL;
            while (Long.compareUnsigned(page, end) < 0)
            {
                final Child c = o.children().get(page >>> IMPLICIT_CHILD_SHIFT);
                if (c == null || !usable(mtt.rawEntry(c.range.firstEntry()
                    + ((page & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12)), write))
                {
                    return Math.max(page, iova);
                }
                page += 4096;
            }
            return -1;
        }
        final MptEntry e = mpt.entry(key);
        final int shift = o.pageShift();
        final long firstBlock = (iova >>> shift) - (e.iova() >>> shift);
        final long lastBlock = ((end - 1) >>> shift) - (e.iova() >>> shift);
        for (long b = firstBlock; b <= lastBlock; b++)
        {
            if (!usable(mtt.rawEntry(e.mtt().firstEntry() + b), write))
            {
                return Math.max(((e.iova() >>> shift) + b) << shift, iova);
            }
        }
        return -1;
    }

    /**
     * What the device would reach for one address of an ODP MR now, read from the tables without the cache (for
     * inspection; counts nothing).
     *
     * @param key  a live ODP MR's key.
     * @param iova an address inside the MR.
     * @return the DMA address, or -1 when the block is not mapped.
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public long mappedDmaAddress(final int key, final long iova)
    {
        final Odp o = odpMr(key, "peek");
        final MptEntry e = mpt.entry(key);
        final long raw;
        final long mask;
        if (o.implicit())
        {
            final Child c = o.children().get(iova >>> IMPLICIT_CHILD_SHIFT);
            raw = c == null ? 0 : mtt.rawEntry(c.range.firstEntry()
                + ((iova & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12));
            mask = 0xfff;
        }
        else
        {
            if (Long.compareUnsigned(iova - e.iova(), e.lengthBytes()) >= 0)
            {
                return -1;
            }
            raw = mtt.rawEntry(e.mtt().firstEntry() + (iova >>> o.pageShift()) - (e.iova() >>> o.pageShift()));
            mask = (1L << o.pageShift()) - 1;
        }
        return raw >= 0 ? -1 : (raw & ~Mtt.PRESENT & ~mask) | (iova & mask);
    }

    private static boolean usable(final long raw, final boolean write)
    {
        return raw < 0 && (!write || (raw & Mtt.READ_ONLY) == 0);
    }

    /**
     * Maps the block holding {@code iova} of an ODP MR (the UMR a page fault or prefetch posts,
     * {@code mlx5r_umr_update_xlt}); for an implicit MR the child of the slot is created first
     * ({@code implicit_get_child_mr}).
     *
     * @param key      a live ODP MR's key.
     * @param iova     an address inside the MR.
     * @param dmaAddr  the DMA address of the block's first byte, aligned to the MR page size.
     * @param writable the device may write through it.
     * @return true when the entry changed (it was not present, was read-only, or pointed elsewhere).
     * @throws TableException EINVAL when the key names no live ODP MR or iova lies outside it; ENOMEM when an
     *                        implicit child's MTT entries cannot be allocated.
     */
    public boolean map(final int key, final long iova, final long dmaAddr, final boolean writable)
    {
        final Odp o = odpMr(key, "map");
        final MptEntry e = mpt.entry(key);
        if (Long.compareUnsigned(iova - e.iova(), e.lengthBytes()) >= 0 || dmaAddr < 0)
        {
            throw new TableException(Errno.EINVAL, "map: iova 0x" + Long.toHexString(iova) + " is outside the MR 0x"
                + Long.toHexString(e.iova()) + "+" + e.lengthBytes() + " or DMA address 0x"
                + Long.toHexString(dmaAddr) + " is negative"
                + "; map only addresses inside the MR");
        }
        final long index;
        Child child = null;
        if (o.implicit())
        {
            final long slot = iova >>> IMPLICIT_CHILD_SHIFT;
            child = o.children().get(slot);
            if (child == null)
            {
                child = new Child(mtt.allocate(IMPLICIT_CHILD_ENTRIES));
                o.children().put(slot, child);
            }
            index = child.range.firstEntry() + ((iova & ((1L << IMPLICIT_CHILD_SHIFT) - 1)) >>> 12);
        }
        else
        {
            index = e.mtt().firstEntry() + (iova >>> o.pageShift()) - (e.iova() >>> o.pageShift());
        }
        final long shiftMask = (1L << (o.implicit() ? 12 : o.pageShift())) - 1;
        final long before = mtt.rawEntry(index);
        final long after = (dmaAddr & ~shiftMask) | Mtt.PRESENT | (writable ? 0 : Mtt.READ_ONLY);
        if (before == after)
        {
            return false;
        }
        if (before != 0)
        {
            // A read-only entry upgraded, or a stale one replaced: the device must not keep the old one cached.
            cache.invalidate(MKey.index(key, variantBits), index, 1);
        }
        else if (child != null)
        {
            child.present++;
        }
        mtt.writeEntry(index, dmaAddr & ~shiftMask, !writable);
        counters.entriesWritten++;
        return true;
    }

    /**
     * Zaps the blocks of an ODP MR that overlap {@code [iova, iova + lengthBytes)} (the invalidation an MMU
     * notifier runs, {@code mlx5_ib_invalidate_range}: MTT entries zeroed by UMR, then the translation cache
     * invalidated). An implicit child left with no present entry is freed.
     *
     * @param key         a live ODP MR's key.
     * @param iova        first address; the range is clipped to the MR.
     * @param lengthBytes bytes.
     * @return the number of present entries zapped (0 when none was: then nothing is posted and the cache is not
     * touched).
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public long zap(final int key, final long iova, final long lengthBytes)
    {
        final Odp o = odpMr(key, "zap");
        final MptEntry e = mpt.entry(key);
        final long start = Math.max(iova, e.iova());
        final long end = Math.min(iova + lengthBytes, e.iova() + e.lengthBytes());
        if (lengthBytes <= 0 || start >= end)
        {
            return 0;
        }
        final long mptIndex = MKey.index(key, variantBits);
        long zapped = 0;
        if (o.implicit())
        {
            for (long slot = start >>> IMPLICIT_CHILD_SHIFT; slot <= (end - 1) >>> IMPLICIT_CHILD_SHIFT; slot++)
            {
                final Child c = o.children().get(slot);
                if (c == null)
                {
                    continue;
                }
                final long slotBase = slot << IMPLICIT_CHILD_SHIFT;
                final long from = (Math.max(start, slotBase) - slotBase) >>> 12;
                final long to = ((Math.min(end, slotBase + (1L << IMPLICIT_CHILD_SHIFT)) - 1 - slotBase) >>> 12) + 1;
                final long n = mtt.zapEntries(c.range.firstEntry() + from, to - from);
                if (n > 0)
                {
                    cache.invalidate(mptIndex, c.range.firstEntry() + from, to - from);
                    c.present -= n;
                    zapped += n;
                }
                if (c.present == 0)
                {
                    // An implicit child left empty is destroyed (mlx5 schedules destroy_unused_implicit_child_mr).
                    cache.invalidate(mptIndex, c.range.firstEntry(), c.range.entries());
                    mtt.free(c.range);
                    o.children().remove(slot);
                }
            }
        }
        else
        {
            final int shift = o.pageShift();
            final long first = (start >>> shift) - (e.iova() >>> shift);
            final long count = ((end - 1) >>> shift) - (e.iova() >>> shift) - first + 1;
            zapped = mtt.zapEntries(e.mtt().firstEntry() + first, count);
            if (zapped > 0)
            {
                cache.invalidate(mptIndex, e.mtt().firstEntry() + first, count);
            }
        }
        if (zapped > 0)
        {
            counters.invalidations++;
            counters.entriesZapped += zapped;
        }
        return zapped;
    }

    /**
     * @param key a live implicit ODP MR's key.
     * @return its children now (1 GiB slots with MTT entries).
     * @throws TableException EINVAL when the key names no live implicit ODP MR.
     */
    public int implicitChildren(final int key)
    {
        final Odp o = odpMr(key, "children");
        if (!o.implicit())
        {
            throw new TableException(Errno.EINVAL, "children: key " + MKey.toHex(key) + " names an explicit ODP MR"
                + " (only an implicit ODP MR has children); pass the key of an implicit ODP MR");
        }
        return o.children().size();
    }

    /**
     * @param key  a live implicit ODP MR's key.
     * @param slot a 1 GiB slot number (address >> 30).
     * @return true when the slot has a child now.
     * @throws TableException EINVAL when the key names no live ODP MR.
     */
    public boolean hasImplicitChild(final int key, final long slot)
    {
        final Odp o = odpMr(key, "child");
        return o.implicit() && o.children().containsKey(slot);
    }

    private Odp odpMr(final int key, final String op)
    {
        final Odp o = odp.isEmpty() ? null : odp.get(MKey.index(key, variantBits));
        if (o == null || !mpt.isLiveKey(key))
        {
            throw new TableException(Errno.EINVAL, op + ": key " + MKey.toHex(key) + " names no live ODP MR"
                + "; pass the key of a live ODP MR");
        }
        return o;
    }
}
