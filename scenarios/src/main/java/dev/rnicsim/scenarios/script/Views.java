package dev.rnicsim.scenarios.script;

import dev.rnicsim.mtt.MttCounters;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.ProcFs;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.strategy.MemoryPool;
import dev.rnicsim.verbs.strategy.StrategyCounters;
import java.util.List;
import java.util.Locale;

/**
 * The {@code show} views: an MR, an on-demand-paging MR, a memory window, a QP, a page-table walk, MTT usage, counters, the registration
 * trace, a devinfo dump, the /proc views, a pool's or a registration cache's counters. Stateless.
 */
final class Views
{
    private Views()
    {
    }

    static String show(final Session s, final ScriptLine l)
    {
        final String what = l.args().get(0);
        if (what.equals("rdma"))
        {
            return RdmaViews.show(s, l);
        }
        final String arg = l.args().size() > 1 ? l.args().get(1) : null;
        if (arg == null && !what.equals("clock"))
        {
            throw l.error("show " + what + " needs a name or an address");
        }
        return switch (what)
        {
            case "mr" -> s.names.get(arg) instanceof SimFastRegMr f ? fastMr(f)
                : s.names.get(arg) instanceof SimOdpMr o ? odp(s, o)
                : s.names.get(arg) instanceof dev.rnicsim.simnic.SimPeerMr g ? Gpus.mrView(g)
                : mr(s, s.get(l, arg, SimMr.class));
            case "forkinit" -> Forks.view(s, l, arg);
            case "gpu" -> Gpus.gpuView(s.get(l, arg, dev.rnicsim.simnic.SimGpu.class));
            case "odp" -> s.names.get(arg) instanceof SimOdpMr o ? odp(s, o)
                : notOdp(l, arg, s.names.get(arg));
            case "mw" -> mw(s, s.get(l, arg, SimMw.class));
            case "qp" -> s.get(l, arg, SimQp.class).toString() + path(s.get(l, arg, SimQp.class)) + ", "
                + s.get(l, arg, SimQp.class).receivesPosted()
                + " receives posted, " + s.get(l, arg, SimQp.class).sendsWaiting() + " sends waiting"
                + Engines.wqes(s.get(l, arg, SimQp.class));
            case "inflight" -> Engines.inflight(s.get(l, arg, SimDevice.class));
            case "walk" -> walk(s, l, arg);
            case "mtt" -> mtt(s.get(l, arg, SimDevice.class));
            case "counters" -> RdmaViews.counters(s.get(l, arg, SimDevice.class));
            case "trace" -> trace(s.get(l, arg, SimDevice.class));
            case "devinfo" -> s.get(l, arg, SimDevice.class).devinfo().stripTrailing();
            case "meminfo" -> ProcFs.meminfo(s.get(l, arg, SimHost.class).host()).stripTrailing();
            case "vmstat" -> ProcFs.vmstat(s.get(l, arg, SimHost.class).host()).stripTrailing();
            case "buddyinfo" -> ProcFs.buddyinfo(s.get(l, arg, SimHost.class).host()).stripTrailing();
            case "hugepages" -> ProcFs.hugepages(s.get(l, arg, SimHost.class).host()).stripTrailing();
            case "status" -> exitedOr(s.get(l, arg, UserProcess.class));
            case "smaps" -> ProcFs.smaps(s.get(l, arg, UserProcess.class)).stripTrailing();
            case "pool" -> pool(arg, s.get(l, arg, Session.PoolBinding.class));
            case "cache" -> cache(arg, s.get(l, arg, Session.CacheBinding.class));
            default -> "simulated clock: " + Units.duration(s.fabric.clock().nowNs()) + " ("
                + s.fabric.clock().nowNs() + " ns)";
        };
    }

    /** {@code show status}: /proc/PID/status, which an exited (and reaped) process no longer has. */
    private static String exitedOr(final UserProcess p)
    {
        return p.exited() ? "process " + p.pid() + " (" + p.name() + ") has exited: /proc/" + p.pid() + "/status is "
            + "gone with its memory (nothing mapped, nothing pinned)" : ProcFs.status(p).stripTrailing();
    }

    private static String mr(final Session s, final SimMr m)
    {
        final StringBuilder windows = new StringBuilder();
        if (!m.isClosed())
        {
            for (final SimMw w : m.pd().memoryWindows())
            {
                if (w.boundMr() == m)
                {
                    windows.append("\n").append(window(s, w));
                }
            }
        }
        return String.format(Locale.ROOT, "MR addr=0x%x length=%s iova=0x%x access=%s%n"
            + "lkey=0x%08x rkey=0x%08x: MPT index %d, variant %d%n"
            + "page size %s, %d MTT entries (%d reserved by the allocator), %d pages of %s pinned%s%s",
            m.addr(), Units.bytes(m.lengthBytes()), m.iova(), m.access(), m.lkey(), m.rkey(),
            MrFields.mrField(m, "index"), MrFields.mrField(m, "variant"), Units.bytes(m.pageSizeBytes()),
            m.mttEntries(), m.mttEntriesReserved(), m.pinnedPages(),
            Units.bytes(m.pd().context().process().host().config().basePage().bytes()),
            m.boundWindows() == 0 ? "" : String.format(Locale.ROOT, "%n%d memory window(s) bound: %s",
            m.boundWindows(), m.pd().context().device().profile().follows(
                dev.rnicsim.simnic.ProviderRule.DEREG_MR_INVALIDATES_BOUND_WINDOWS)
                ? "deregistration would go on and leave them translating nothing (mlx5_ib_dereg_mr counts no windows)"
                : "deregistration fails until they are unbound, invalidated or closed") + windows,
            m.isClosed() ? "\n(deregistered: the keys no longer translate)" : "");
    }

    /** {@code show odp} of a name that is no ODP MR. */
    private static String notOdp(final ScriptLine l, final String name, final Object o)
    {
        if (o instanceof dev.rnicsim.simnic.SimPeerMr)
        {
            throw l.error("'" + name + "' is an MR over GPU memory, not an on-demand-paging one; show mr " + name
                + " shows it");
        }
        if (o instanceof SimMr || o instanceof SimFastRegMr)
        {
            throw l.error("'" + name + "' is a pinned MR, not an on-demand-paging one (register it with access=odp,"
                + "...); show mr " + name + " shows it");
        }
        throw l.error("'" + name + "' is no MR; show odp needs the name of an ODP MR (reg ... access=odp,...)");
    }

    /** Most runs of mapped pages {@code show odp} lists. */
    private static final int MAX_RUNS = 8;

    /**
     * An ODP MR: keys, range, its faults, entries mapped and zapped, implicit children, and the runs of pages the
     * device maps now.
     */
    private static String odp(final Session s, final SimOdpMr m)
    {
        final StringBuilder sb = new StringBuilder();
        final long block = 1L << m.pageShift();
        if (m.isImplicit())
        {
            sb.append(String.format(Locale.ROOT, "implicit ODP MR lkey=0x%08x rkey=0x%08x: MPT index %d, variant %d; "
                + "the whole address space, access=%s%n", m.lkey(), m.rkey(), (m.lkey() >>> 8) & 0xffffff,
                m.lkey() & 0xff, m.access()));
            sb.append(String.format(Locale.ROOT, "%d child(ren) of 1 GiB, %d MTT entries", m.implicitChildren(),
                OdpPages.mttEntries(m)));
        }
        else
        {
            sb.append(String.format(Locale.ROOT, "ODP MR addr=0x%x length=%s iova=0x%x access=%s%n"
                + "lkey=0x%08x rkey=0x%08x: MPT index %d, variant %d%n"
                + "page size %s, %d MTT entries", m.addr(), Units.bytes(m.lengthBytes()), m.iova(), m.access(),
                m.lkey(), m.rkey(), (m.lkey() >>> 8) & 0xffffff, m.lkey() & 0xff, Units.bytes(block),
                OdpPages.mttEntries(m)));
        }
        sb.append(String.format(Locale.ROOT, ", 0 pages pinned%n%d page fault(s); %d entries mapped, %d zapped by "
            + "invalidations since registration", m.pageFaults(), m.entriesMapped(), m.entriesZapped()));
        if (m.isClosed())
        {
            return sb.append("\n(deregistered: the keys no longer translate)").toString();
        }
        final List<OdpPages.Run> runs = OdpPages.mapped(m);
        long mapped = 0;
        for (final OdpPages.Run r : runs)
        {
            mapped += (r.endVa() - r.startVa()) / block;
        }
        if (m.isImplicit())
        {
            sb.append(String.format(Locale.ROOT, "%nthe device maps %d page(s) of %s in the process's mappings",
                mapped, Units.bytes(block)));
        }
        else
        {
            sb.append(String.format(Locale.ROOT, "%nthe device maps %d of %d page(s) of %s", mapped,
                OdpPages.mttEntries(m), Units.bytes(block)));
        }
        final long base = m.isImplicit() ? 0 : m.addr() & -block;
        for (int i = 0; i < runs.size() && i < MAX_RUNS; i++)
        {
            final OdpPages.Run r = runs.get(i);
            final long pages = (r.endVa() - r.startVa()) / block;
            sb.append(String.format(Locale.ROOT, "%n  0x%x-0x%x %s", r.startVa(), r.endVa(), m.isImplicit()
                ? "(" + pages + " page" + (pages == 1 ? "" : "s") + ")"
                : pages == 1 ? "page " + (r.startVa() - base) / block
                : "pages " + (r.startVa() - base) / block + "-" + ((r.endVa() - base) / block - 1)));
            final String owner = bufferAt(s, m, r.startVa());
            if (owner != null)
            {
                sb.append(' ').append(owner);
            }
            final long phys = m.devicePhysAddr(Math.max(r.startVa(), m.addr()));
            if (phys >= 0)
            {
                sb.append(String.format(Locale.ROOT, ", first page -> phys 0x%x", phys & -block));
            }
        }
        if (runs.size() > MAX_RUNS)
        {
            sb.append(String.format(Locale.ROOT, "%n  ... %d more run(s)", runs.size() - MAX_RUNS));
        }
        return sb.toString();
    }

    /** The script's buffer holding an address of the MR's process, as {@code in NAME+OFFSET}, or null. */
    private static String bufferAt(final Session s, final SimOdpMr m, final long va)
    {
        String best = null;
        for (final java.util.Map.Entry<String, Object> e : new java.util.TreeMap<>(s.names).entrySet())
        {
            if (e.getValue() instanceof Session.Buffer b && b.process() == m.pd().context().process()
                && va >= b.addr() && va - b.addr() < b.lengthBytes() && best == null)
            {
                best = "in " + e.getKey() + (va == b.addr() ? "" : "+" + Units.bytes(va - b.addr()));
            }
        }
        return best;
    }

    private static String fastMr(final SimFastRegMr f)
    {
        return String.format(Locale.ROOT, "fast-registration MR key=0x%08x: MPT index %d, variant %d; MTT room for "
            + "%d pages%n%s", f.lkey(), (f.lkey() >>> 8) & 0xffffff, f.lkey() & 0xff, f.maxNumSg(),
            f.isClosed() ? "(deregistered: the key no longer translates)"
            : (f.isValid() ? "VALID" : "INVALID") + (f.lengthBytes() == 0 ? ", no pages mapped"
            : String.format(Locale.ROOT, ", mapped 0x%x+%s", f.addr(), Units.bytes(f.lengthBytes())))
            + (f.isValid() ? ", access " + f.access() : ""));
    }

    private static String mw(final Session s, final SimMw w)
    {
        return window(s, w);
    }

    /** One window: type, key, and what it is bound to. */
    private static String window(final Session s, final SimMw w)
    {
        final String head = String.format(Locale.ROOT, "MW %s type %d rkey=0x%08x: MPT index %d, variant %d",
            nameOf(s, w), w.type().code(), w.rkey(), (w.rkey() >>> 8) & 0xffffff, w.rkey() & 0xff);
        if (w.isClosed())
        {
            return head + "; deallocated: the rkey no longer translates";
        }
        if (!w.isBound())
        {
            return head + "; unbound: it grants nothing";
        }
        final SimMr m = w.boundMr();
        return head + String.format(Locale.ROOT, "; bound to MR %s (lkey 0x%08x): 0x%x-0x%x (%s), rights %s%s",
            nameOf(s, m), m.lkey(), w.addr(), w.addr() + w.lengthBytes(), Units.bytes(w.lengthBytes()), w.access(),
            w.boundQp() == null ? ", any QP of its PD" : String.format(Locale.ROOT, ", only through QP %s (0x%x)",
            nameOf(s, w.boundQp()), w.boundQp().qpNum()));
    }

    /** The script's name for an object (the first in order when several name it), or "-". */
    private static String nameOf(final Session s, final Object o)
    {
        String best = null;
        for (final java.util.Map.Entry<String, Object> e : s.names.entrySet())
        {
            if (e.getValue() == o && (best == null || e.getKey().compareTo(best) < 0))
            {
                best = e.getKey();
            }
        }
        return best == null ? "-" : best;
    }

    /** The walk a CPU (and ib_umem_get) does for one address: the table indices of the host's MMU and the leaf. */
    private static String walk(final Session s, final ScriptLine l, final String expr)
    {
        final Session.Val v = s.eval(l, expr);
        if (v.process() == null)
        {
            throw l.error("show walk needs an address in a process (a buffer or MR name, plus an offset)");
        }
        final UserProcess p = v.process();
        final long va = v.num();
        final StringBuilder sb = new StringBuilder();
        final PageSize mapped = p.exited() ? null : p.mappedPageSize(va);
        sb.append(WalkGeometry.line(va, p.host().config().basePage(), mapped)).append(System.lineSeparator());
        final Vma vma = p.exited() ? null : p.vmaAt(va);
        if (vma == null)
        {
            return sb.append("no VMA maps it: an access is a segmentation fault (EFAULT for a pin)").toString();
        }
        sb.append(String.format(Locale.ROOT, "VMA 0x%x-0x%x %s %s%n", vma.startAddress(), vma.endAddress(),
            vma.permissions(), vma.kind().name().toLowerCase(Locale.ROOT)));
        final PageSize size = p.mappedPageSize(va);
        if (size == null)
        {
            return sb.append("not present: a touch faults a page in (a new page, or the old one back from swap)")
                .toString();
        }
        final long phys = p.translate(va);
        final long pfn = phys >>> PhysicalMemory.FRAME_SHIFT;
        final PhysicalMemory pm = p.host().physicalMemory();
        // A page larger than its leaf (arm64's contiguous-bit hugetlb pages, the 32 and 512 MiB PMDs of 16 and 64 KiB
        // hosts) is a run of leaves here; a base page of 16 or 64 KiB a run of 4 KiB PTEs over one folio.
        final String level = size.leaf() == PageSize.SIZE_1G ? "PUD leaf" : size.leaf() == PageSize.SIZE_2M
            ? "PMD leaf" : "PTE";
        final String leaf = level + " (" + Units.bytes(size.bytes()) + " page"
            + (size.leaves() > 1 ? ", a run of " + size.leaves() + " " + Units.bytes(size.leaf().bytes()) + " leaves"
                : "") + ")";
        sb.append(String.format(Locale.ROOT, "%s -> phys 0x%x (pfn 0x%x)", leaf, phys, pfn));
        if (pfn == pm.zeroPfn())
        {
            sb.append(", the shared zero page (read-only until written)");
        }
        else
        {
            sb.append(String.format(Locale.ROOT, ", zone %s, pin count %d, map count %d", pm.zoneOf(pfn),
                pm.pinCount(pfn), pm.mapCount(pfn)));
        }
        return sb.toString();
    }

    private static String pool(final String name, final Session.PoolBinding p)
    {
        final MemoryPool.Config c = p.config();
        return String.format(Locale.ROOT, "pool %s: chunks of %s (at most %d), fragments of %s to %s, access %s%n%s"
            + "%n%d fragment(s) out", name, Units.bytes(c.chunkBytes()), c.maxChunks(),
            Units.bytes(c.minFragmentBytes()), Units.bytes(c.chunkBytes()), StrategyVerbs.accessText(c.access()),
            counters(p.pool().counters()),
            p.pool().liveFragments());
    }

    private static String cache(final String name, final Session.CacheBinding c)
    {
        return String.format(Locale.ROOT, "cache %s: %s; %s%n%s%n%d idle MR(s)", name, StrategyVerbs.bounds(c.config()),
            c.hooked() ? "munmap invalidates (hook=yes)" : "munmap does not invalidate (hook=no)",
            counters(c.cache().counters()), c.cache().idleEntries());
    }

    /** A pool's or a cache's counters, one line each group. */
    private static String counters(final StrategyCounters c)
    {
        return String.format(Locale.ROOT, "hits %d, misses %d, evictions %d, invalidations %d%n"
            + "registrations %d (%s registered in all); live %d MR(s), %s", c.hits(), c.misses(), c.evictions(),
            c.invalidations(), c.registrations(), Units.bytes(c.bytesRegistered()), c.liveMrs(),
            Units.bytes(c.liveBytes()));
    }

    private static String mtt(final SimDevice d)
    {
        final MttCounters m = d.tables().mtt().counters();
        return String.format(Locale.ROOT, "MTT (%s): %d entries, %d in use (%d asked for by the MRs), %d free, "
            + "largest free block %d%nMPT: %d of max_mr %d in use; translation cache %d entries",
            d.profile().mtt().allocator().name().toLowerCase(Locale.ROOT), m.capacityEntries(), m.entriesInUse(),
            m.entriesRequested(), m.entriesFree(), m.largestFreeBlock(), d.tables().mpt().inUse(),
            d.attributes().maxMr(), d.profile().cacheEntries());
    }

    private static String counters(final SimDevice d)
    {
        final StringBuilder sb = new StringBuilder();
        for (final dev.rnicsim.simnic.SimCounter c : dev.rnicsim.simnic.SimCounter.values())
        {
            if (sb.length() > 0)
            {
                sb.append('\n');
            }
            sb.append(String.format(Locale.ROOT, "%-36s %12d %s", c.label(), d.counter(c), c.unit()));
        }
        return sb.toString();
    }

    private static String trace(final SimDevice d)
    {
        final StringBuilder sb = new StringBuilder();
        for (final RegistrationEvent e : d.recentRegistrations())
        {
            if (sb.length() > 0)
            {
                sb.append('\n');
            }
            sb.append(String.format(Locale.ROOT, "%12d ns %-5s lkey=0x%08x addr=0x%x len=%s pages=%d page=%s mtt=%d"
                + " %s", e.startNs(), e.kind(), e.lkey(), e.addr(), Units.bytes(e.lengthBytes()), e.pagesPinned(),
                Units.bytes(e.pageSizeBytes()), e.mttEntries(), Units.duration(e.durationNs())));
        }
        return sb.length() == 0 ? "no registrations yet" : sb.toString();
    }

    /**
     * @return the path a connected QP's packets take, as ibv_query_qp answers it: {@code , path_mtu N bytes}, and on
     *         RoCE {@code , sgid_index N (RoCE v2)}, the source GID entry that decides the RoCE version; "" before
     *         RTR, for a QP without a path (UD) and for a destroyed QP.
     */
    private static String path(final SimQp qp)
    {
        if (qp.isClosed())
        {
            return ""; // ibv_query_qp answers nothing for a destroyed QP
        }
        final dev.rnicsim.verbs.QpAttr a = qp.query();
        final dev.rnicsim.verbs.AhAttr av = a.ahAttr();
        final StringBuilder sb = new StringBuilder();
        if (a.pathMtu() > 0)
        {
            sb.append(", path_mtu ").append(dev.rnicsim.verbs.QpAttr.mtuBytes(a.pathMtu())).append(" bytes");
        }
        if (av != null && av.isGlobal() && qp.simDevice().profile().gidKinds().roce())
        {
            final java.util.List<dev.rnicsim.verbs.GidEntry> table = dev.rnicsim.simnic.GidTable.entries(qp.simDevice(),
                av.portNum() < 1 ? 1 : av.portNum());
            sb.append(", sgid_index ").append(av.sgidIndex()).append(av.sgidIndex() < table.size()
                ? " (" + table.get(av.sgidIndex()).gidType().sysfsName().replace("IB/", "") + ")" : "");
        }
        return sb.toString();
    }
}
