package dev.rnicsim.mtt;

/**
 * The translation a DMA performs through the adapter's tables, as {@link AdapterTables} exposes it: the MPT entry
 * (through the translation cache), the key checks (a type 2 window's QP, then the MPT's PD, state, range and rights),
 * then the MTT entry of the page (through the cache), with an implicit ODP MR's child entry in between. It allocates
 * nothing and never throws: a failed check is the negative {@link KeyCheck#code()}.
 *
 * <p>Not thread safe.
 */
final class KeyTranslation
{
    /** Access bits with which the device writes memory: a read-only MTT entry faults for them. */
    private static final int DEVICE_WRITES = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE
        | AccessFlags.REMOTE_ATOMIC;

    private final Mtt mtt;
    private final MptTable mpt;
    private final TranslationCache cache;
    private final int variantBits;
    private final MemoryWindows windows;
    private final OnDemandPaging odp;

    KeyTranslation(final Mtt mtt, final MptTable mpt, final TranslationCache cache, final int variantBits,
        final MemoryWindows windows, final OnDemandPaging odp)
    {
        this.mtt = mtt;
        this.mpt = mpt;
        this.cache = cache;
        this.variantBits = variantBits;
        this.windows = windows;
        this.odp = odp;
    }

    /**
     * {@link AdapterTables#translate(int, int, int, int, long, long)}; with {@code mptLookup} false, as
     * {@link AdapterTables#translateInMessage}: the MPT entry is not looked up in the translation cache again.
     */
    long translate(final int key, final int pd, final int qpn, final int access, final long iova,
        final long lengthBytes, final boolean mptLookup)
    {
        final long index = MKey.index(key, variantBits);
        if (windows.wrongQp(index, key, pd, qpn))
        {
            if (mptLookup)
            {
                cache.access(TranslationCache.mptTag(index));
            }
            return KeyCheck.WRONG_QP.code();
        }
        if (mptLookup)
        {
            cache.access(TranslationCache.mptTag(index));
        }
        final long slot = mpt.translationSlot(index, key, pd, access, iova, lengthBytes);
        if (slot < 0)
        {
            return slot;
        }
        int shift = (int)(slot & 63);
        long mttIndex = slot >>> 7;
        if (odp.any())
        {
            // The parent's KSM entry of the 1 GiB slot, then the child's MTT entry of the 4 KiB page.
            final long childEntry = odp.implicitEntry(index,
                (slot & MptTable.SLOT_PAST_END) != 0 ? iova - 1 : iova);
            if (childEntry == OnDemandPaging.NO_CHILD)
            {
                return KeyCheck.NOT_PRESENT.code();
            }
            if (childEntry != OnDemandPaging.NOT_IMPLICIT)
            {
                shift = 12;
                mttIndex = childEntry;
            }
        }
        cache.access(TranslationCache.mttTag(mttIndex));
        final long pageMask = (1L << shift) - 1;
        final long raw = mtt.rawEntry(mttIndex);
        if (raw >= 0 || ((raw & Mtt.READ_ONLY) != 0 && (access & DEVICE_WRITES) != 0))
        {
            return KeyCheck.NOT_PRESENT.code();
        }
        final long page = raw & ~Mtt.PRESENT & ~pageMask;
        if ((slot & MptTable.SLOT_PAST_END) != 0)
        {
            // An empty access just past the last byte (rxe mr_check_range allows it) maps one past that byte.
            return page + ((iova - 1) & pageMask) + 1;
        }
        return page | (iova & pageMask);
    }

    /** {@link AdapterTables#blockDmaAddress}: the next MTT entry (through the cache) of an access already checked. */
    long blockDmaAddress(final long mttIndex, final int pageShift)
    {
        cache.accessHinted(TranslationCache.mttTag(mttIndex));
        final long raw = mtt.rawEntry(mttIndex);
        if (raw >= 0)
        {
            return KeyCheck.NOT_PRESENT.code();
        }
        return raw & ~Mtt.PRESENT & ~((1L << pageShift) - 1);
    }

    /** {@link AdapterTables#check}: the key checks without the translation cache (nothing is counted). */
    KeyCheck check(final int key, final int pd, final int qpn, final int access, final long iova,
        final long lengthBytes)
    {
        final long index = MKey.index(key, variantBits);
        if (windows.wrongQp(index, key, pd, qpn))
        {
            return KeyCheck.WRONG_QP;
        }
        final long slot = mpt.translationSlot(index, key, pd, access, iova, lengthBytes);
        return slot < 0 ? KeyCheck.ofTranslation(slot) : KeyCheck.VALID;
    }
}
