package dev.rnicsim.pagetable;

/**
 * A four-level x86-64 page table (PGD, PUD, PMD, PTE; 9 index bits a level, 48-bit virtual addresses): leaves
 * are 4 KiB PTEs, 2 MiB PMD entries or 1 GiB PUD entries (Intel SDM vol. 3A section 4.5). A table holds 512
 * entries of one {@code long} each, so a fully mapped 4 KiB page costs 8 bytes of table.
 *
 * <p>Entry format (a model of the hardware one, with the frame number in the same place):
 * <pre>
 *   63                         12 11  10 9     6   5     4     3     2     1     0
 *  +-----------------------------+------+-------+-----+-----+-----+-----+-----+-----+
 *  | pfn, or swap slot if SWAP   |  0   | PAGE  | RSV | 1G  | 2M  | SWAP| W   | P   |
 *  +-----------------------------+------+-------+-----+-----+-----+-----+-----+-----+
 * </pre>
 * P present; W writable by the CPU (clear on copy-on-write pages); SWAP a not-present entry naming a swap slot;
 * 2M or 1G a leaf above the PTE level; RSV a not-present hugetlb slot whose page is reserved in the pool; PAGE, when
 * not 0, the page size this leaf is one of a run of (1 + the {@link PageSize} ordinal): a page larger than its leaf,
 * such as arm64's 32 MiB PMD of a 16 KiB host or a contiguous-bit hugetlb page, is stored as naturally aligned leaves
 * over one contiguous folio, each carrying PAGE (arch/arm64/mm/hugetlbpage.c {@code set_huge_pte_at} writes
 * {@code ncontig} entries the same way).
 *
 * <p>Not thread safe.
 */
final class PageTable
{
    static final long PRESENT = 1;
    static final long WRITE = 1 << 1;
    static final long SWAP = 1 << 2;
    static final long HUGE_2M = 1 << 3;
    static final long HUGE_1G = 1 << 4;
    static final long RESERVED = 1 << 5;
    static final int PAGE_SHIFT_BITS = 6;
    static final long PAGE_BITS = 0xfL << PAGE_SHIFT_BITS;
    static final int PFN_SHIFT = 12;
    private static final long FLAGS_MASK = (1L << PFN_SHIFT) - 1;

    /** Visitor of leaves. */
    interface LeafVisitor
    {
        /**
         * @param va    virtual address of the leaf's first byte.
         * @param entry the entry.
         * @param size  the size the leaf maps.
         */
        void leaf(long va, long entry, PageSize size);
    }

    /** Visitor of leaves that may stop the walk. */
    interface LeafScanner
    {
        /**
         * @param va    virtual address of the leaf's first byte.
         * @param entry the entry.
         * @param size  the size the leaf maps.
         * @return false to stop the walk after this leaf.
         */
        boolean leaf(long va, long entry, PageSize size);
    }

    /** Told before a present leaf is cleared, pointed at another frame or loses its write bit. */
    interface LeafChangeListener
    {
        /**
         * @param va   first byte of the leaf.
         * @param size the size the leaf maps.
         */
        void changing(long va, PageSize size);
    }

    private LeafChangeListener listener;

    /** Sets (or with null removes) the one listener told of changes to present leaves. */
    void listener(final LeafChangeListener l)
    {
        listener = l;
    }

    /**
     * A table of 512 slots, each an entry and (above the PTE level) a child table. Slots are kept in chunks of 64, a
     * chunk allocated with its first non-zero entry or its first child: a process maps a few regions, so most upper
     * tables hold a child or two and most PTE tables a run of pages, and a fresh process zeroed 2 KiB of children
     * for each upper table and 4 KiB of entries for each PTE table (a test that makes thousands of processes spent
     * about 3 % of its time there).
     */
    private static final class Table
    {
        /** The entries of each chunk of 64 slots; null while all of the chunk's are zero. */
        private final long[][] entries = new long[8][];
        /** The children of each chunk of 64 slots, null while it has none; null for a PTE table. */
        private final Table[][] children;
        int used;
        /** Bit i is set while {@code entry(i) != 0} or {@code child(i) != null}: scans skip empty slots. */
        final long[] occupied = new long[8];

        Table(final boolean hasChildren)
        {
            children = hasChildren ? new Table[8][] : null;
        }

        long entry(final int i)
        {
            final long[] chunk = entries[i >>> 6];
            return chunk == null ? 0 : chunk[i & 63];
        }

        void entry(final int i, final long entry)
        {
            long[] chunk = entries[i >>> 6];
            if (chunk == null)
            {
                if (entry == 0)
                {
                    return;
                }
                chunk = new long[64];
                entries[i >>> 6] = chunk;
            }
            chunk[i & 63] = entry;
        }

        Table child(final int i)
        {
            if (children == null)
            {
                return null;
            }
            final Table[] chunk = children[i >>> 6];
            return chunk == null ? null : chunk[i & 63];
        }

        void child(final int i, final Table t)
        {
            Table[] chunk = children[i >>> 6];
            if (chunk == null)
            {
                chunk = new Table[64];
                children[i >>> 6] = chunk;
            }
            chunk[i & 63] = t;
        }

        /** The first occupied slot at or after {@code from}, or 512 when none. */
        int next(final int from)
        {
            int w = from >>> 6;
            if (w >= 8)
            {
                return 512;
            }
            long bits = occupied[w] & (-1L << (from & 63));
            while (bits == 0)
            {
                if (++w == 8)
                {
                    return 512;
                }
                bits = occupied[w];
            }
            return (w << 6) | Long.numberOfTrailingZeros(bits);
        }
    }

    private final Table root = new Table(true);
    private long tableCount = 1;
    /**
     * The tables on the path to the PTE table used last, and its 2 MiB-aligned key ({@code va >>> 21}; -1: none):
     * tables are never freed or replaced, so the path stays valid, and a walk over consecutive pages reaches its PTE
     * table without going through the upper levels again.
     */
    private long lastKey = -1;
    private Table lastPud;
    private Table lastPmd;
    private Table lastPte;

    static long pfn(final long entry)
    {
        return entry >>> PFN_SHIFT;
    }

    static long make(final long pfnOrSlot, final long flags)
    {
        return (pfnOrSlot << PFN_SHIFT) | flags;
    }

    static boolean present(final long entry)
    {
        return (entry & PRESENT) != 0;
    }

    static PageSize size(final long entry)
    {
        if ((entry & HUGE_1G) != 0)
        {
            return PageSize.SIZE_1G;
        }
        return (entry & HUGE_2M) != 0 ? PageSize.SIZE_2M : PageSize.SIZE_4K;
    }

    /**
     * @return the size of the page the leaf belongs to: its PAGE field, or the leaf size when the field is 0.
     */
    static PageSize pageSize(final long entry)
    {
        final int code = (int)((entry & PAGE_BITS) >>> PAGE_SHIFT_BITS);
        return code == 0 ? size(entry) : PageSize.ofOrdinal(code - 1);
    }

    /** @return the leaf flags that store a page of {@code page}: the leaf level bit and, when larger, PAGE. */
    static long leafBits(final PageSize page)
    {
        final PageSize leaf = page.leaf();
        final long level = leaf == PageSize.SIZE_1G ? HUGE_1G : leaf == PageSize.SIZE_2M ? HUGE_2M : 0;
        return level | (page == leaf ? 0 : (long)(page.ordinal() + 1) << PAGE_SHIFT_BITS);
    }

    /**
     * Maps a whole page of size {@code page} at {@code pageVa} (aligned to it): every leaf of its run points at its
     * part of the folio from {@code headPfn}, with {@code flags} (P, W) and the page's leaf bits. With
     * {@code headPfn} &lt; 0 every leaf is cleared, or set to {@code flags} alone when they are not 0 (RSV).
     */
    void setPage(final long pageVa, final PageSize page, final long headPfn, final long flags)
    {
        final PageSize leaf = page.leaf();
        for (long i = 0; i < page.leaves(); i++)
        {
            final long va = pageVa + i * leaf.bytes();
            final long entry = headPfn < 0 ? (flags == 0 ? 0 : flags | leafBits(page))
                : make(headPfn + i * leaf.frames(), (flags & ~(HUGE_2M | HUGE_1G | PAGE_BITS)) | leafBits(page));
            set(va, leaf, entry);
        }
    }

    static long flags(final long entry)
    {
        return entry & FLAGS_MASK;
    }

    private static int index(final long va, final int shift)
    {
        return (int)((va >>> shift) & 511);
    }

    /** @return bytes of page-table memory below the PGD (4 KiB a table), as VmPTE counts them. */
    long tableBytes()
    {
        return (tableCount - 1) * PhysicalMemory.FRAME_BYTES;
    }

    /**
     * @param va a virtual address.
     * @return the leaf entry covering {@code va} (a 1 GiB or 2 MiB leaf, or the PTE), or 0 when none.
     */
    long lookup(final long va)
    {
        if (va >>> 21 == lastKey)
        {
            final long pudEntry = lastPud.entry(index(va, 30));
            if (pudEntry != 0)
            {
                return pudEntry;
            }
            final long pmdEntry = lastPmd.entry(index(va, 21));
            return pmdEntry != 0 ? pmdEntry : lastPte.entry(index(va, 12));
        }
        final Table pud = root.child(index(va, 39));
        if (pud == null)
        {
            return 0;
        }
        final int pudIndex = index(va, 30);
        final long pudEntry = pud.entry(pudIndex);
        if (pudEntry != 0)
        {
            return pudEntry;
        }
        final Table pmd = pud.child(pudIndex);
        if (pmd == null)
        {
            return 0;
        }
        final int pmdIndex = index(va, 21);
        final long pmdEntry = pmd.entry(pmdIndex);
        if (pmdEntry != 0)
        {
            return pmdEntry;
        }
        final Table pte = pmd.child(pmdIndex);
        if (pte == null)
        {
            return 0;
        }
        remember(va, pud, pmd, pte);
        return pte.entry(index(va, 12));
    }

    private void remember(final long va, final Table pud, final Table pmd, final Table pte)
    {
        lastKey = va >>> 21;
        lastPud = pud;
        lastPmd = pmd;
        lastPte = pte;
    }

    /** Sets the leaf of size {@code size} covering {@code va} (0 clears it), creating tables on the way. */
    void set(final long va, final PageSize size, final long entry)
    {
        if (size == PageSize.SIZE_4K && va >>> 21 == lastKey)
        {
            final Table pte = lastPte;
            tell(pte.entry(index(va, 12)), entry, va, size);
            store(pte, index(va, 12), entry);
            return;
        }
        final Table pud = child(root, index(va, 39), true);
        if (size == PageSize.SIZE_1G)
        {
            tell(pud.entry(index(va, 30)), entry, va, size);
            store(pud, index(va, 30), entry);
            return;
        }
        final Table pmd = child(pud, index(va, 30), true);
        if (size == PageSize.SIZE_2M)
        {
            tell(pmd.entry(index(va, 21)), entry, va, size);
            store(pmd, index(va, 21), entry);
            return;
        }
        final Table pte = child(pmd, index(va, 21), false);
        remember(va, pud, pmd, pte);
        tell(pte.entry(index(va, 12)), entry, va, size);
        store(pte, index(va, 12), entry);
    }

    /** Tells the listener, before the store, when a present leaf goes, moves to another frame or loses W. */
    private void tell(final long old, final long entry, final long va, final PageSize size)
    {
        if (listener != null && present(old)
            && (!present(entry) || pfn(old) != pfn(entry) || ((old & WRITE) != 0 && (entry & WRITE) == 0)))
        {
            listener.changing(va & ~(size.bytes() - 1), size);
        }
    }

    private Table child(final Table parent, final int index, final boolean childHasChildren)
    {
        Table t = parent.child(index);
        if (t == null)
        {
            t = new Table(childHasChildren);
            parent.child(index, t);
            parent.occupied[index >>> 6] |= 1L << index;
            parent.used++;
            tableCount++;
        }
        return t;
    }

    private static void store(final Table table, final int index, final long entry)
    {
        final long old = table.entry(index);
        if (old == 0 && entry != 0)
        {
            table.used++;
        }
        else if (old != 0 && entry == 0)
        {
            table.used--;
        }
        if (old != entry)
        {
            table.entry(index, entry);
        }
        if (entry != 0)
        {
            table.occupied[index >>> 6] |= 1L << index;
        }
        else if (table.child(index) == null)
        {
            table.occupied[index >>> 6] &= ~(1L << index);
        }
    }

    /**
     * @return true when nothing is mapped, swapped or reserved in the 2 MiB range around {@code va}, so that a PMD
     * leaf may be installed there (the kernel's {@code pmd_none}).
     */
    boolean pmdNone(final long va)
    {
        final Table pud = root.child(index(va, 39));
        if (pud == null)
        {
            return true;
        }
        if (pud.entry(index(va, 30)) != 0)
        {
            return false;
        }
        final Table pmd = pud.child(index(va, 30));
        if (pmd == null)
        {
            return true;
        }
        final int i = index(va, 21);
        final Table pte = pmd.child(i);
        return pmd.entry(i) == 0 && (pte == null || pte.used == 0);
    }

    /**
     * Replaces the PMD mapping at {@code va} by PTEs mapping the same frames with the same flags
     * (mm/huge_memory.c {@code __split_huge_pmd}): a 2 MiB leaf becomes 512 PTEs; a THP of a 16 or 64 KiB host
     * (32 or 512 MiB, a run of 2 MiB leaves here) has all its leaves split, as its one PMD is. The folio itself is
     * not split.
     */
    void splitPmd(final long va)
    {
        final PageSize page = pageSize(lookup(va));
        final long pageVa = va & ~(page.bytes() - 1);
        for (long leafVa = pageVa; leafVa < pageVa + page.bytes(); leafVa += PageSize.SIZE_2M.bytes())
        {
            final long entry = lookup(leafVa);
            final long flags = flags(entry) & ~(HUGE_2M | PAGE_BITS);
            final long firstPfn = pfn(entry);
            set(leafVa, PageSize.SIZE_2M, 0);
            for (int i = 0; i < 512; i++)
            {
                set(leafVa + ((long)i << PFN_SHIFT), PageSize.SIZE_4K, make(firstPfn + i, flags));
            }
        }
    }

    /**
     * Visits every non-empty leaf that overlaps {@code [fromVa, toVa)}, in address order. A huge leaf is visited
     * once with its own first address, which may lie below {@code fromVa}. The visitor may change the entry it
     * is given but nothing else in the table.
     */
    void forEachLeaf(final long fromVa, final long toVa, final LeafVisitor visitor)
    {
        scanLeaves(fromVa, toVa, (va, entry, size) ->
        {
            visitor.leaf(va, entry, size);
            return true;
        });
    }

    /**
     * Like {@link #forEachLeaf} but stops when the scanner returns false.
     *
     * @return the address after the leaf where the scan stopped, or {@code toVa} when it ran to the end.
     */
    long scanLeaves(final long fromVa, final long toVa, final LeafScanner visitor)
    {
        for (int g = root.next(index(fromVa, 39)); g < 512; g = root.next(g + 1))
        {
            final long gVa = (long)g << 39;
            if (gVa >= toVa)
            {
                return toVa;
            }
            final Table pud = root.child(g);
            if (pud == null)
            {
                continue;
            }
            final int uStart = gVa + (1L << 39) <= fromVa ? 512 : (fromVa > gVa ? index(fromVa, 30) : 0);
            for (int u = pud.next(uStart); u < 512; u = pud.next(u + 1))
            {
                final long uVa = gVa | ((long)u << 30);
                if (uVa >= toVa)
                {
                    return toVa;
                }
                if (pud.entry(u) != 0)
                {
                    if (!visitor.leaf(uVa, pud.entry(u), PageSize.SIZE_1G))
                    {
                        return uVa + PageSize.SIZE_1G.bytes();
                    }
                    continue;
                }
                final Table pmd = pud.child(u);
                if (pmd == null)
                {
                    continue;
                }
                final int mStart = fromVa > uVa ? index(fromVa, 21) : 0;
                for (int m = pmd.next(mStart); m < 512; m = pmd.next(m + 1))
                {
                    final long mVa = uVa | ((long)m << 21);
                    if (mVa >= toVa)
                    {
                        return toVa;
                    }
                    if (pmd.entry(m) != 0)
                    {
                        if (!visitor.leaf(mVa, pmd.entry(m), PageSize.SIZE_2M))
                        {
                            return mVa + PageSize.SIZE_2M.bytes();
                        }
                        continue;
                    }
                    final Table pte = pmd.child(m);
                    if (pte == null || pte.used == 0)
                    {
                        continue;
                    }
                    final int pStart = fromVa > mVa ? index(fromVa, 12) : 0;
                    for (int p = pte.next(pStart); p < 512; p = pte.next(p + 1))
                    {
                        final long pVa = mVa | ((long)p << 12);
                        if (pVa >= toVa)
                        {
                            return toVa;
                        }
                        if (pte.entry(p) != 0)
                        {
                            if (!visitor.leaf(pVa, pte.entry(p), PageSize.SIZE_4K))
                            {
                                return pVa + PageSize.SIZE_4K.bytes();
                            }
                        }
                    }
                }
            }
        }
        return toVa;
    }
}
