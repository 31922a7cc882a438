package dev.rnicsim.scenarios.explorer;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.MKey;
import dev.rnicsim.mtt.MptEntry;
import dev.rnicsim.mtt.Mtt;
import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.mtt.TranslationCache;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.scenarios.script.ScriptStep;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.simnic.SimQp;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The state of a run's fabric after one step, as a JSON tree the explorer page draws: hosts with their processes
 * (VMAs, buffers, RLIMIT_MEMLOCK and pinned_vm), the physical frames behind each buffer with their pin and map
 * counts (as runs), and per device the MPT (each key split into index and variant with the device's variant bits),
 * the MTT range of each key, the translation cache's counters and which of a key's entries it holds, and the QPs.
 * Objects are keyed by stable names so that consecutive states differ only where the model changed (see
 * {@link MergePatch}). Bounded: at most {@link #MAX_KEYS} keys a device, {@link #MAX_RUNS} frame runs a buffer,
 * {@link #MAX_SCAN_PAGES} pages scanned a buffer. Stateless apart from the names it was given; not thread safe.
 */
final class StateSnapshot
{
    /** Most MPT entries listed per device (the rest are counted). */
    static final int MAX_KEYS = 64;
    /** Most runs of frames listed per buffer (the rest are counted). */
    static final int MAX_RUNS = 12;
    /** Most pages of a buffer walked for its frames (a 256 MiB buffer of 4 KiB pages). */
    static final long MAX_SCAN_PAGES = 65_536;
    /** Most VMAs listed per process. */
    static final int MAX_VMAS = 48;
    /** Most MTT entries of one key shown with their DMA addresses. */
    static final int MTT_SAMPLE = 4;
    /** Most MTT entries of one key checked for presence in the translation cache. */
    static final long MAX_CACHE_PROBES = 4096;

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final ScriptStep step;
    private final Map<Object, String> names = new IdentityHashMap<>();

    StateSnapshot(final ScriptStep step)
    {
        this.step = step;
        for (final Map.Entry<String, Object> e : step.names().entrySet())
        {
            names.putIfAbsent(e.getValue() instanceof SimContext c ? c.process() : e.getValue(), e.getKey());
            names.putIfAbsent(e.getValue(), e.getKey());
        }
    }

    /** @return the script's name of an object, or null. */
    String nameOf(final Object o)
    {
        return names.get(o);
    }

    /** @return the whole state. */
    ObjectNode state()
    {
        final ObjectNode s = JSON.objectNode();
        final ObjectNode hosts = s.putObject("hosts");
        for (final SimHost h : step.fabric().hosts())
        {
            hosts.set(h.name(), host(h));
        }
        final ObjectNode devices = s.putObject("devices");
        for (final SimDevice d : step.fabric().devices())
        {
            devices.set(d.name(), device(d));
        }
        final ObjectNode qps = s.putObject("qps");
        final ObjectNode cqs = s.putObject("cqs");
        for (final Map.Entry<String, Object> e : step.names().entrySet())
        {
            if (e.getValue() instanceof SimQp q)
            {
                final ObjectNode n = qps.putObject(e.getKey());
                n.put("qpNum", q.qpNum());
                n.put("device", q.simDevice().name());
                n.put("type", q.type().name());
                n.put("state", q.isClosed() ? "DESTROYED" : q.state().name());
                n.put("sendsWaiting", q.sendsWaiting());
                n.put("receivesPosted", q.receivesPosted());
            }
            else if (e.getValue() instanceof SimCq c)
            {
                final ObjectNode n = cqs.putObject(e.getKey());
                n.put("cqe", c.cqe());
                n.put("depth", c.isClosed() ? 0 : c.depth());
                n.put("device", c.context().device().name());
            }
        }
        return s;
    }

    private ObjectNode host(final SimHost h)
    {
        final ObjectNode n = JSON.objectNode();
        final PhysicalMemory pm = h.host().physicalMemory();
        n.put("framesTotal", pm.totalFrames());
        n.put("framesFree", pm.freeFrames());
        n.put("hugepages2mTotal", h.host().hugepagesTotal(PageSize.SIZE_2M));
        n.put("hugepages2mFree", h.host().hugepagesFree(PageSize.SIZE_2M));
        final ObjectNode procs = n.putObject("processes");
        for (final UserProcess p : h.host().processes())
        {
            procs.set(Integer.toString(p.pid()), process(p));
        }
        return n;
    }

    private ObjectNode process(final UserProcess p)
    {
        final ObjectNode n = JSON.objectNode();
        final String name = nameOf(p);
        n.put("name", name == null ? p.name() : name);
        n.put("pid", p.pid());
        n.put("exited", p.exited());
        n.put("memlockBytes", p.rlimitMemlockBytes());
        n.put("capIpcLock", p.capIpcLock());
        n.put("pinnedVmPages", p.pinnedVmPages());
        final ObjectNode vmas = n.putObject("vmas");
        final List<Vma> list = p.exited() ? List.of() : p.vmas();
        for (int i = 0; i < list.size() && i < MAX_VMAS; i++)
        {
            final Vma v = list.get(i);
            final ObjectNode o = vmas.putObject(hex(v.startAddress()));
            o.put("start", hex(v.startAddress()));
            o.put("end", hex(v.endAddress()));
            o.put("lengthBytes", v.lengthBytes());
            o.put("perms", v.permissions());
            o.put("kind", v.kind().name().toLowerCase(Locale.ROOT));
            o.put("pageBytes", v.hugePageSize().bytes());
        }
        n.put("moreVmas", Math.max(0, list.size() - MAX_VMAS));
        final ObjectNode buffers = n.putObject("buffers");
        for (final Map.Entry<String, Object> e : step.names().entrySet())
        {
            if (e.getValue() instanceof ScriptStep.Buffer b && b.process() == p)
            {
                final ObjectNode o = buffers.putObject(e.getKey());
                o.put("addr", hex(b.addr()));
                o.put("lengthBytes", b.lengthBytes());
                if (!p.exited())
                {
                    frames(o, p, b.addr(), b.lengthBytes());
                }
            }
        }
        return n;
    }

    /**
     * The frames behind a buffer as runs of pages that are physically contiguous with equal size, pin count and map
     * count; a run of pfn -1 is not present (never touched, swapped out, or no VMA).
     */
    private static void frames(final ObjectNode o, final UserProcess p, final long addr, final long lengthBytes)
    {
        final PhysicalMemory pm = p.host().physicalMemory();
        final ArrayNode runs = o.putArray("runs");
        final long end = addr + lengthBytes;
        long va = addr & -PhysicalMemory.FRAME_BYTES;
        long scanned = 0;
        int more = 0;
        ObjectNode run = null;
        long nextPfn = 0;
        while (va < end && scanned < MAX_SCAN_PAGES)
        {
            final PageSize size = p.mappedPageSize(va);
            final long pageBytes = size == null ? PhysicalMemory.FRAME_BYTES : size.bytes();
            final long pageVa = va & -pageBytes;
            final long pfn = size == null ? -1 : p.translate(pageVa) >>> PhysicalMemory.FRAME_SHIFT;
            final boolean zero = pfn >= 0 && pfn == pm.zeroPfn();
            final int pin = pfn < 0 || zero ? 0 : pm.pinCount(pfn);
            final int map = pfn < 0 || zero ? 0 : pm.mapCount(pfn);
            final boolean continues = run != null && run.get("pageBytes").asLong() == pageBytes
                && run.get("pin").asInt() == pin && run.get("map").asInt() == map
                && run.get("zero").asBoolean() == zero && (pfn < 0 ? run.get("pfn").asLong() < 0
                : zero || pfn == nextPfn);
            if (continues)
            {
                run.put("pages", run.get("pages").asLong() + 1);
            }
            else if (runs.size() < MAX_RUNS)
            {
                run = runs.addObject();
                run.put("va", hex(pageVa));
                run.put("pfn", pfn);
                run.put("pages", 1);
                run.put("pageBytes", pageBytes);
                run.put("pin", pin);
                run.put("map", map);
                run.put("zero", zero);
                if (pfn >= 0 && !zero)
                {
                    run.put("zone", pm.zoneOf(pfn).name());
                }
            }
            else
            {
                run = null;
                more++;
            }
            nextPfn = pfn + pageBytes / PhysicalMemory.FRAME_BYTES;
            scanned++;
            va = pageVa + pageBytes;
        }
        o.put("moreRuns", more);
        o.put("scannedBytes", Math.min(end, va) - addr);
    }

    private ObjectNode device(final SimDevice d)
    {
        final ObjectNode n = JSON.objectNode();
        final AdapterTables t = d.tables();
        final int variantBits = t.mpt().config().variantBits();
        n.put("host", d.host().name());
        n.put("profile", d.profile().name());
        n.put("variantBits", variantBits);
        n.put("maxMr", d.attributes().maxMr());
        n.put("mptInUse", t.mpt().inUse());
        final MttCounters m = t.mtt().counters();
        final ObjectNode mtt = n.putObject("mtt");
        mtt.put("allocator", d.profile().mtt().allocator().name().toLowerCase(Locale.ROOT));
        mtt.put("capacity", m.capacityEntries());
        mtt.put("inUse", m.entriesInUse());
        mtt.put("requested", m.entriesRequested());
        mtt.put("free", m.entriesFree());
        mtt.put("largestFree", m.largestFreeBlock());
        final TranslationCache c = t.cache();
        final ObjectNode cache = n.putObject("cache");
        cache.put("capacity", c.capacityEntries());
        cache.put("hits", c.hits());
        cache.put("misses", c.misses());
        cache.put("evictions", c.evictions());
        cache.put("invalidations", c.invalidations());
        final List<Keyed> keys = keys(d);
        final ObjectNode mpt = n.putObject("keys");
        for (int i = 0; i < keys.size() && i < MAX_KEYS; i++)
        {
            final Keyed k = keys.get(i);
            mpt.set(Long.toString(MKey.index(k.key(), variantBits)), key(t, variantBits, k));
        }
        n.put("moreKeys", Math.max(0, keys.size() - MAX_KEYS));
        return n;
    }

    /** A live key of a device: what owns it and where in which process it maps. */
    record Keyed(int key, String kind, Object owner, UserProcess process, long addr, long lengthBytes)
    {
    }

    /** @return the live keys of a device, by MPT index. */
    static List<Keyed> keys(final SimDevice d)
    {
        final List<Keyed> out = new ArrayList<>();
        for (final SimContext c : d.contexts())
        {
            if (c.isClosed())
            {
                continue;
            }
            final UserProcess p = c.process();
            for (final SimPd pd : c.protectionDomains())
            {
                if (pd.isClosed())
                {
                    continue;
                }
                for (final SimMr m : pd.memoryRegions())
                {
                    if (!m.isClosed())
                    {
                        out.add(new Keyed(m.lkey(), "MR", m, p, m.addr(), m.lengthBytes()));
                    }
                }
                for (final SimOdpMr m : pd.odpMemoryRegions())
                {
                    if (!m.isClosed())
                    {
                        out.add(new Keyed(m.lkey(), m.isImplicit() ? "implicit ODP MR" : "ODP MR", m, p,
                            m.addr(), m.lengthBytes()));
                    }
                }
                for (final SimPeerMr m : pd.peerMemoryRegions())
                {
                    if (!m.isClosed())
                    {
                        out.add(new Keyed(m.lkey(), "GPU MR", m, p, m.addr(), m.lengthBytes()));
                    }
                }
                for (final SimFastRegMr m : pd.fastRegMrs())
                {
                    if (!m.isClosed())
                    {
                        out.add(new Keyed(m.lkey(), "fast-reg MR", m, p, m.addr(), m.lengthBytes()));
                    }
                }
                for (final SimMw w : pd.memoryWindows())
                {
                    if (!w.isClosed())
                    {
                        out.add(new Keyed(w.rkey(), "MW type " + w.type().code(), w, p, w.addr(),
                            w.lengthBytes()));
                    }
                }
            }
        }
        out.sort(Comparator.comparingLong(k -> Integer.toUnsignedLong(k.key())));
        return out;
    }

    private ObjectNode key(final AdapterTables t, final int variantBits, final Keyed k)
    {
        final ObjectNode o = JSON.objectNode();
        final String name = nameOf(k.owner());
        o.put("name", name == null ? "-" : name);
        o.put("kind", k.kind());
        o.put("key", hex32(k.key()));
        o.put("index", MKey.index(k.key(), variantBits));
        o.put("variant", MKey.variant(k.key(), variantBits));
        o.put("process", k.process().pid());
        o.put("addr", hex(k.addr()));
        o.put("lengthBytes", k.lengthBytes());
        final long index = MKey.index(k.key(), variantBits);
        o.put("mptCached", t.cache().contains(TranslationCache.mptTag(index)));
        final MptEntry e = t.mpt().entry(k.key());
        if (e == null)
        {
            return o;
        }
        o.put("state", e.state().name());
        o.put("pd", e.pd());
        o.put("iova", hex(e.iova()));
        o.put("pageBytes", 1L << e.pageShift());
        if (e.mtt() != null && e.mtt().entries() > 0)
        {
            final long first = e.mtt().firstEntry();
            o.put("mttFirst", first);
            o.put("mttEntries", e.mtt().entries());
            o.put("mttReserved", e.mtt().reservedEntries());
            long cached = 0;
            final long probes = Math.min(e.mtt().entries(), MAX_CACHE_PROBES);
            for (long i = 0; i < probes; i++)
            {
                cached += t.cache().contains(TranslationCache.mttTag(first + i)) ? 1 : 0;
            }
            o.put("mttCached", cached);
            o.put("mttProbed", probes);
            final ArrayNode sample = o.putArray("mttSample");
            for (long i = 0; i < Math.min(e.mtt().entries(), MTT_SAMPLE); i++)
            {
                final long raw = t.mtt().entry(first + i);
                final ObjectNode s = sample.addObject();
                s.put("index", first + i);
                s.put("dma", raw < 0 ? hex(raw & ~Mtt.PRESENT & ~(PhysicalMemory.FRAME_BYTES - 1L)) : "-");
                s.put("cached", t.cache().contains(TranslationCache.mttTag(first + i)));
            }
        }
        return o;
    }

    static String hex(final long v)
    {
        return "0x" + Long.toHexString(v);
    }

    static String hex32(final int key)
    {
        return String.format(Locale.ROOT, "0x%08x", key);
    }
}
