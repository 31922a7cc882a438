package dev.rnicsim.scenarios.explorer;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.Mtt;
import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.scenarios.script.ScriptStep;
import dev.rnicsim.simnic.SimDevice;
import java.util.Locale;

/**
 * What one step did that is no part of the lasting state: the page-table walk of each address it named, with the
 * frame found and, where a live MR maps the address, its MTT entry; which of those the page's arrow follows. The
 * walk is the one a CPU and {@code ib_umem_get} do (mm/gup.c): PGD, PUD, PMD and PTE indices of 9 bits each, the
 * leaf at the PUD for a 1 GiB page and at the PMD for a 2 MiB page. Stateless; not thread safe.
 */
final class StepDetail
{
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final int LEVEL_BITS = 9;
    private static final long LEVEL_MASK = (1L << LEVEL_BITS) - 1;
    private static final int PGD_SHIFT = 39;
    private static final int PUD_SHIFT = 30;
    private static final int PMD_SHIFT = 21;
    private static final int PTE_SHIFT = 12;

    private StepDetail()
    {
    }

    /**
     * @param step     the step.
     * @param snapshot names of the step's objects.
     * @param out      where {@code walks} and {@code follow} are put.
     */
    static void walks(final ScriptStep step, final StateSnapshot snapshot, final ObjectNode out)
    {
        final ArrayNode walks = out.putArray("walks");
        int follow = -1;
        for (final ScriptStep.Address a : step.touched())
        {
            final ObjectNode w = walk(step, snapshot, a);
            walks.add(w);
            // The first address with a page behind it (a remote one first): with or without an MR over it, since a
            // page no MR maps is what a stale key runs into.
            if (follow < 0 && w.path("pfn").asLong(-1) >= 0)
            {
                follow = walks.size() - 1;
            }
        }
        out.put("follow", follow);
    }

    private static ObjectNode walk(final ScriptStep step, final StateSnapshot snapshot, final ScriptStep.Address a)
    {
        final UserProcess p = a.process();
        final long va = a.va();
        final ObjectNode w = JSON.objectNode();
        final String name = snapshot.nameOf(p);
        w.put("expr", a.expr());
        w.put("process", p.pid());
        w.put("processName", name == null ? p.name() : name);
        w.put("va", StateSnapshot.hex(va));
        final PageSize size = p.mappedPageSize(va);
        final ArrayNode levels = w.putArray("levels");
        level(levels, "PGD", va, PGD_SHIFT);
        level(levels, "PUD", va, PUD_SHIFT);
        if (size == null || size.leaf() != PageSize.SIZE_1G)
        {
            level(levels, "PMD", va, PMD_SHIFT);
        }
        if (size == null || size.leaf() == PageSize.SIZE_4K)
        {
            level(levels, "PTE", va, PTE_SHIFT);
        }
        final Vma vma = p.vmaAt(va);
        if (vma == null)
        {
            w.put("note", "no VMA maps it: an access is a segmentation fault (EFAULT for a pin)");
            w.put("pfn", -1);
            return w;
        }
        final ObjectNode v = w.putObject("vma");
        v.put("start", StateSnapshot.hex(vma.startAddress()));
        v.put("end", StateSnapshot.hex(vma.endAddress()));
        v.put("perms", vma.permissions());
        v.put("kind", vma.kind().name().toLowerCase(Locale.ROOT));
        if (size == null)
        {
            w.put("note", "not present: a touch faults a page in");
            w.put("pfn", -1);
            return w;
        }
        final long pageVa = va & -size.bytes();
        final long phys = p.translate(va);
        final long pfn = p.translate(pageVa) >>> PhysicalMemory.FRAME_SHIFT;
        final PhysicalMemory pm = p.host().physicalMemory();
        w.put("pageBytes", size.bytes());
        w.put("pageVa", StateSnapshot.hex(pageVa));
        w.put("offset", StateSnapshot.hex(va - pageVa));
        w.put("phys", StateSnapshot.hex(phys));
        w.put("pfn", pfn);
        if (pfn == pm.zeroPfn())
        {
            w.put("zero", true);
            w.put("note", "the shared zero page (read-only until written)");
        }
        else
        {
            w.put("zone", pm.zoneOf(pfn).name());
            w.put("pin", pm.pinCount(pfn));
            w.put("map", pm.mapCount(pfn));
        }
        mtt(step, snapshot, p, va, w);
        return w;
    }

    private static void level(final ArrayNode levels, final String name, final long va, final int shift)
    {
        final ObjectNode l = levels.addObject();
        l.put("name", name);
        l.put("index", (va >>> shift) & LEVEL_MASK);
    }

    /**
     * The MTT entry of the MR page holding an address, for the first live MR (a named one in the step's line
     * first) of any device that maps it.
     */
    private static void mtt(final ScriptStep step, final StateSnapshot snapshot, final UserProcess p, final long va,
        final ObjectNode w)
    {
        StateSnapshot.Keyed best = null;
        SimDevice bestDevice = null;
        for (final SimDevice d : step.fabric().devices())
        {
            for (final StateSnapshot.Keyed k : StateSnapshot.keys(d))
            {
                if (k.process() != p || !k.kind().endsWith("MR") || k.kind().startsWith("implicit")
                    || va < k.addr() || va - k.addr() >= k.lengthBytes())
                {
                    continue;
                }
                if (best == null || isNamed(step, snapshot, k) && !isNamed(step, snapshot, best))
                {
                    best = k;
                    bestDevice = d;
                }
            }
        }
        if (best == null)
        {
            return;
        }
        final AdapterTables t = bestDevice.tables();
        final int bits = t.mpt().config().variantBits();
        final long iova = va - best.addr() + iovaOf(t, best);
        final long index = t.blockIndex(best.key(), iova);
        final ObjectNode m = w.putObject("mtt");
        final String name = snapshot.nameOf(best.owner());
        m.put("device", bestDevice.name());
        m.put("mr", name == null ? "-" : name);
        m.put("key", StateSnapshot.hex32(best.key()));
        m.put("mptIndex", MKey.index(best.key(), bits));
        m.put("variant", MKey.variant(best.key(), bits));
        m.put("iova", StateSnapshot.hex(iova));
        m.put("index", index);
        if (index >= 0)
        {
            final long raw = t.mtt().entry(index);
            m.put("present", raw < 0);
            m.put("dma", raw < 0 ? StateSnapshot.hex(raw & ~Mtt.PRESENT & ~(PhysicalMemory.FRAME_BYTES - 1L)) : "-");
            m.put("cached", t.cache().contains(TranslationCache.mttTag(index)));
        }
    }

    private static boolean isNamed(final ScriptStep step, final StateSnapshot snapshot, final StateSnapshot.Keyed k)
    {
        final String name = snapshot.nameOf(k.owner());
        if (name == null)
        {
            return false;
        }
        for (final String word : step.text().split("[ =,:+\\-]"))
        {
            if (word.equals(name))
            {
                return true;
            }
        }
        return false;
    }

    private static long iovaOf(final AdapterTables t, final StateSnapshot.Keyed k)
    {
        final dev.rnicsim.mtt.MptEntry e = t.mpt().entry(k.key());
        return e == null ? k.addr() : e.iova();
    }
}
