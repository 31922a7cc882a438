package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.PAGE;
import static dev.rnicsim.keys.WorldModel.ZERO;

import dev.rnicsim.keys.WorldModel.Frame;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.Page;
import dev.rnicsim.keys.WorldModel.Ring;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.Vma;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The reference model of app_b's memory in a {@link KeyWorld}: its pages (which frame each maps, shared copy-on-write
 * or not, swapped out or not), the frames with their bytes, map counts and pins, and the rings that CQs and QPs map and
 * pin; what a fault, a pin, an unpin and an unmap do to them (the rules in {@link KeyWorld}'s description), and the
 * bytes a CPU or a DMA through an MR's pinned frames reads and writes. Not thread safe.
 */
final class BetaMemory
{
    private final KeyWorld world;
    /** The model's pages of app_b; every put or remove counts in {@link #pagesVersion}. */
    final PageMap pages = new PageMap();
    /** Changes to {@link #pages}. */
    long pagesVersion;
    /** app_b's VMAs and {@link #pagesVersion} when they last matched (the VMA list is null until then). */
    private List<Vma> pagesMatchedVmas;
    private long pagesMatchedVersion = -1;
    /** The rings of app_b's CQs and QPs, mapped and pinned. */
    final List<Ring> rings = new ArrayList<>();

    BetaMemory(final KeyWorld world)
    {
        this.world = world;
    }

    /** The model's pages, in address order (to compare with {@link #simPages} on a failure). */
    TreeSet<Long> modelPages()
    {
        final TreeSet<Long> set = new TreeSet<>();
        for (final long va : pages.sortedAddresses())
        {
            set.add(va);
        }
        return set;
    }

    /** The pages app_b maps now, from its VMAs. */
    TreeSet<Long> simPages()
    {
        final TreeSet<Long> set = new TreeSet<>();
        for (final Vma v : world.appB.vmas())
        {
            for (long va = v.startAddress(); va < v.endAddress(); va += PAGE)
            {
                set.add(va);
            }
        }
        return set;
    }

    /**
     * Whether app_b's VMAs cover exactly the model's pages (what {@link #simPages} would say, without a set). When
     * neither side changed since the last comparison that held (the process hands out the same list of VMAs until
     * they change, and {@link #pagesVersion} counts the model's changes), that comparison's answer stands.
     */
    boolean mapsTheModelsPages()
    {
        final List<Vma> vmas = world.appB.vmas();
        if (vmas == pagesMatchedVmas && pagesVersion == pagesMatchedVersion)
        {
            return true;
        }
        // The model's addresses ascend, each a distinct page: n of them from a VMA's first page to its last are
        // exactly its n pages, so each VMA's first and last page settle its run.
        final int size = pages.size();
        int at = 0;
        for (final Vma v : vmas)
        {
            final long n = (v.endAddress() - v.startAddress() + PAGE - 1) / PAGE;
            if (n <= 0)
            {
                continue;
            }
            if (n > size - at || pages.sortedAddress(at) != v.startAddress()
                || pages.sortedAddress(at + (int)n - 1) != v.startAddress() + (n - 1) * PAGE)
            {
                return false;
            }
            at += (int)n;
        }
        if (at != size)
        {
            return false;
        }
        pagesMatchedVmas = vmas;
        pagesMatchedVersion = pagesVersion;
        return true;
    }

    /** The pages app_b maps now that no VMA of {@code before} (app_b's VMAs then, in address order) covered. */
    private TreeSet<Long> pagesSince(final List<Vma> before)
    {
        final TreeSet<Long> since = new TreeSet<>();
        int j = 0;
        for (final Vma v : world.appB.vmas())
        {
            for (long va = v.startAddress(); va < v.endAddress(); va += PAGE)
            {
                while (j < before.size() && before.get(j).endAddress() <= va)
                {
                    j++;
                }
                if (j == before.size() || before.get(j).startAddress() > va)
                {
                    since.add(va);
                }
            }
        }
        return since;
    }

    // ------------------------------------------------------------------ model of memory

    /** A new frame mapped once: a copy of {@code from}'s bytes, or zeros when null. */
    private static Frame newFrame(final Frame from)
    {
        final Frame f = new Frame(from == null ? null : from.copyOfBytes());
        f.mapCount = 1;
        return f;
    }

    private void swapIn(final Page p)
    {
        p.frame = newFrame(p.frame);
        p.swapped = false;
    }

    /** A CPU write fault (or the fault of a write pin): a private writable page. */
    private void writeFault(final Page p)
    {
        if (p.swapped)
        {
            swapIn(p);
        }
        if (p.frame == null || p.frame == ZERO)
        {
            p.frame = newFrame(null);
        }
        else if (p.frame.mapCount > 1)
        {
            final Frame copy = newFrame(p.frame);
            p.frame.mapCount--;
            p.frame = copy;
        }
    }

    /** A CPU read fault: the zero page for an untouched page, swap-in for a swapped one. */
    private void readFault(final Page p)
    {
        if (p.swapped)
        {
            swapIn(p);
        }
        else if (p.frame == null)
        {
            p.frame = ZERO;
        }
    }

    /** One page of pin_user_pages(FOLL_LONGTERM [| FOLL_WRITE]); returns the frame pinned. */
    private Frame pinPage(final Page p, final boolean write)
    {
        if (write)
        {
            writeFault(p);
        }
        else
        {
            readFault(p);
            if (world.params.fork() == ForkBehaviour.MODERN)
            {
                if (p.frame == ZERO)
                {
                    p.frame = newFrame(null);
                }
                else if (p.frame.mapCount > 1)
                {
                    final Frame copy = newFrame(p.frame);
                    p.frame.mapCount--;
                    p.frame = copy;
                }
            }
        }
        if (p.frame != ZERO)
        {
            p.frame.pins++;
        }
        return p.frame;
    }

    static void unpin(final Frame[] frames)
    {
        for (final Frame f : frames)
        {
            if (f != ZERO)
            {
                f.pins--;
            }
        }
    }

    void unmapPage(final long va)
    {
        final Page p = pages.remove(va);
        pagesVersion++;
        if (p != null)
        {
            drop(p);
        }
    }

    static void drop(final Page p)
    {
        if (p.frame != null && p.frame != ZERO && !p.swapped)
        {
            p.frame.mapCount--;
        }
        p.frame = null;
        p.swapped = false;
    }

    boolean allMapped(final long addr, final long len)
    {
        for (long va = addr & -PAGE; va < addr + len; va += PAGE)
        {
            if (!pages.containsKey(va))
            {
                return false;
            }
        }
        return true;
    }

    /** The bytes a CPU read of [addr, addr+len) returns, faulting pages in as the model says. */
    byte[] read(final long addr, final int len)
    {
        final byte[] out = new byte[len];
        for (int i = 0; i < len;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(len - i, (int)PAGE - in);
            final Page p = pages.get((addr + i) & -PAGE);
            readFault(p);
            System.arraycopy(p.frame.bytes(), in, out, i, n);
            i += n;
        }
        return out;
    }

    void write(final long addr, final byte[] data)
    {
        for (int i = 0; i < data.length;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(data.length - i, (int)PAGE - in);
            final Page p = pages.get((addr + i) & -PAGE);
            writeFault(p);
            System.arraycopy(data, i, p.frame.writable(), in, n);
            i += n;
        }
    }

    /** The frame of an MR holding iova {@code a}. */
    static Frame mrFrame(final MrM m, final long a)
    {
        return m.frames[(int)(((a & -PAGE) - m.firstPage()) / PAGE)];
    }

    static byte[] mrRead(final MrM m, final long addr, final int len)
    {
        final byte[] out = new byte[len];
        for (int i = 0; i < len;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(len - i, (int)PAGE - in);
            System.arraycopy(mrFrame(m, addr + i).bytes(), in, out, i, n);
            i += n;
        }
        return out;
    }

    void mrWrite(final MrM m, final long addr, final byte[] data)
    {
        for (int i = 0; i < data.length;)
        {
            final int in = (int)((addr + i) & (PAGE - 1));
            final int n = Math.min(data.length - i, (int)PAGE - in);
            final Frame f = mrFrame(m, addr + i);
            if (f == ZERO)
            {
                throw world.failure(Mismatch.Kind.BYTES, "model: a write through " + m.name
                    + " would land on the zero page");
            }
            System.arraycopy(data, i, f.writable(), in, n);
            i += n;
        }
    }

    // ------------------------------------------------------------------ rings

    /**
     * The ring a CQ or QP creation just mapped and pinned: the pages that appeared in app_b since {@code before}
     * (so that the model knows which addresses it holds: a ring may land in a hole a munmap left).
     */
    Ring newRing(final List<Vma> before, final int expectedPages, final String owner)
    {
        // The new pages' count, first and last, as pagesSince finds them (its set only for a failure), run by run:
        // each VMA's stretches that no VMA of before covered.
        long count = 0;
        long first = 0;
        long last = 0;
        int j = 0;
        for (final Vma v : world.appB.vmas())
        {
            final long end = v.endAddress();
            long at = v.startAddress();
            while (at < end)
            {
                while (j < before.size() && before.get(j).endAddress() <= at)
                {
                    j++;
                }
                final long coveredFrom = j == before.size() ? end : Math.min(end, before.get(j).startAddress());
                if (coveredFrom > at)
                {
                    // [at, coveredFrom) is new
                    first = count == 0 ? at : first;
                    count += (coveredFrom - at + PAGE - 1) / PAGE;
                    last = at + ((coveredFrom - at + PAGE - 1) / PAGE - 1) * PAGE;
                    at = coveredFrom;
                }
                else
                {
                    at = Math.min(end, before.get(j).endAddress());
                }
            }
        }
        if (count != expectedPages || last - first != (expectedPages - 1) * PAGE)
        {
            throw world.failure("the ring of " + owner + " should map and pin " + expectedPages
                + " contiguous pages, new "
                + "pages: " + WorldChecks.hexes(pagesSince(before)));
        }
        final Ring r = new Ring();
        r.addr = first;
        r.pages = expectedPages;
        r.frames = new Frame[expectedPages];
        for (int i = 0; i < expectedPages; i++)
        {
            final Page p = new Page();
            p.frame = newFrame(null);
            p.frame.pins = 1;
            pages.put(r.addr + i * PAGE, p);
            pagesVersion++;
            r.frames[i] = p.frame;
        }
        rings.add(r);
        return r;
    }

    /** Ring.release: unpin, then munmap its range (whatever is mapped there now). */
    void releaseRing(final Ring r)
    {
        unpin(r.frames);
        for (int i = 0; i < r.pages; i++)
        {
            unmapPage(r.addr + i * PAGE);
        }
        rings.remove(r);
    }

    Frame[] pin(final long addr, final long len, final boolean write)
    {
        final int n = MrM.pages(addr, len);
        final Frame[] frames = new Frame[n];
        for (int i = 0; i < n; i++)
        {
            frames[i] = pinPage(pages.get((addr & -PAGE) + i * PAGE), write);
        }
        return frames;
    }
}
