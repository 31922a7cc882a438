package dev.rnicsim.dma;

import dev.rnicsim.mtt.KeyCheck;
import java.util.List;

/**
 * A position in a list of checked segments: the physical address of the current byte and the bytes up to the
 * end of the current MR page or segment (the page-size choice makes each MR page physically contiguous). The
 * next page or segment is translated only when a byte of it is about to move, so a receive larger than the
 * message costs no translation for the part left unwritten.
 */
final class Walk
{
    private final DmaEngine engine;
    final DmaPort port;
    private final int pd;
    private final int access;
    final List<Segment> segments;
    private final long[] firstPhys;
    private int index = -1;
    long addr;
    private long segmentLeft;
    private long pageBytes;
    private int pageShift;
    private long mttIndex;
    private long phys;
    /** The current segment's MR is an implicit ODP MR: its pages are not consecutive MTT entries. */
    private boolean indirect;
    /** 0: phys is current; 1: translate addr first; 2: move to the next segment first. */
    private int pending = 2;

    /** {@code firstPhys}: each segment's first DMA address, found when it was checked (-1: translate it). */
    Walk(final DmaEngine engine, final DmaPort port, final int pd, final int access, final List<Segment> segments,
        final long[] firstPhys)
    {
        this.engine = engine;
        this.port = port;
        this.pd = pd;
        this.access = access;
        this.segments = segments;
        this.firstPhys = firstPhys;
    }

    /**
     * Before a later packet of a message: the device resolves it through the key's current context (its MPT
     * entry and MTT entries now; the packet carries no key of its own, IBA 9.7.4.1.3). When the key's MPT entry
     * no longer maps the block this walk stands in — the key was retired and came back under another
     * registration (a variant that wrapped) — the walk is translated again from the key, so the packet lands
     * where the key translates now and never in the pages of the registration that is gone (or of another MR
     * that took its MTT entries).
     */
    void resync()
    {
        if (index < 0 || pending == 2 || indirect)
        {
            return;
        }
        final int key = segments.get(index).key();
        final long expected = port.tables().blockIndex(key, addr);
        final long standing = pending == 1 ? mttIndex + 1 : mttIndex;
        if (expected < 0 || expected == standing && port.tables().pageShift(key) == pageShift)
        {
            return;
        }
        pageShift = port.tables().pageShift(key);
        pageBytes = 1L << pageShift;
        // Only the current page: the packet's re-check covered its bytes, not the rest of the old segment.
        final long r = engine.keys.translate(port, key, pd, access, addr, Math.min(segmentLeft,
            pageBytes - (addr & (pageBytes - 1))));
        if (r < 0)
        {
            throw new IllegalStateException("a re-checked packet's first page does not translate: "
                + KeyCheck.ofTranslation(r));
        }
        phys = r;
        mttIndex = expected;
        pending = 0;
    }

    /**
     * Before a packet of a message over on-demand-paging memory, after its page faults were resolved: the page the
     * walk stands in may have been invalidated and faulted in again on another frame since the last packet (the
     * notifier zaps the entries, {@code mlx5_ib_invalidate_range}; the next fault maps the new page), so a walk in
     * the middle of an ODP page translates its position again. Other walks, and walks at a page or segment boundary
     * (which translate the next page when they get there), are left as they are.
     */
    void refault()
    {
        if (index < 0 || pending != 0 || !port.tables().isOnDemand(segments.get(index).key()))
        {
            return;
        }
        locate();
        mttIndex = port.tables().blockIndex(segments.get(index).key(), addr);
    }

    /** @return the key of the current segment (after {@link #phys()} or {@link #run()} resolved it). */
    int key()
    {
        return segments.get(index).key();
    }

    /** @return the physical address of the current byte. */
    long phys()
    {
        resolve();
        return phys;
    }

    long run()
    {
        resolve();
        final long toPageEnd = pageBytes - (addr & (pageBytes - 1));
        return Math.min(toPageEnd, segmentLeft);
    }

    void advance(final long n)
    {
        final long toPageEnd = pageBytes - (addr & (pageBytes - 1));
        addr += n;
        segmentLeft -= n;
        if (segmentLeft == 0)
        {
            pending = 2;
        }
        else if (n == toPageEnd)
        {
            pending = 1;
        }
        else
        {
            phys += n;
        }
    }

    private void resolve()
    {
        if (pending == 0)
        {
            return;
        }
        if (pending == 2)
        {
            nextSegment();
        }
        else
        {
            nextPage();
        }
        pending = 0;
    }

    private void nextSegment()
    {
        do
        {
            index++;
            if (index >= segments.size())
            {
                throw new IllegalStateException("walked past the last checked segment");
            }
        }
        while (segments.get(index).lengthBytes() == 0);
        final Segment s = segments.get(index);
        addr = s.addr();
        segmentLeft = s.lengthBytes();
        pageShift = port.tables().pageShift(s.key());
        pageBytes = 1L << pageShift;
        indirect = port.tables().isImplicit(s.key());
        if (firstPhys[index] >= 0)
        {
            phys = firstPhys[index];
        }
        else
        {
            locate();
        }
        mttIndex = port.tables().blockIndex(s.key(), addr);
    }

    /** Into the next MR page of a checked segment: only the next MTT entry is fetched. */
    private void nextPage()
    {
        if (indirect)
        {
            locate();
            return;
        }
        engine.translations++;
        mttIndex++;
        final long r = port.tables().blockDmaAddress(mttIndex, pageShift);
        if (r < 0)
        {
            throw new IllegalStateException("MTT entry " + mttIndex + " of a checked segment is not present");
        }
        phys = r;
    }

    private void locate()
    {
        final long r = engine.keys.translate(port, segments.get(index).key(), pd, access, addr, segmentLeft);
        if (r < 0)
        {
            // Every segment was checked before the first byte moved; nothing can revoke it in between.
            throw new IllegalStateException("translation of a checked segment failed: "
                + KeyCheck.ofTranslation(r));
        }
        phys = r;
    }
}
