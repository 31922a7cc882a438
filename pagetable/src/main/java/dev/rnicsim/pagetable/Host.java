package dev.rnicsim.pagetable;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A simulated host: physical memory, its processes, reclaim under memory pressure, compaction, and the event
 * counters of /proc/vmstat. Everything is deterministic: the same calls give the same frames, the same counts
 * and the same views.
 *
 * <p>Not thread safe: a host and its processes are driven by one thread.
 */
public final class Host
{
    /** Pages reclaim tries to free per round (mm/vmscan.c {@code SWAP_CLUSTER_MAX}). */
    public static final int SWAP_CLUSTER_MAX = 32;

    private final HostConfig config;
    private final PhysicalMemory phys;
    private final List<UserProcess> processes = new ArrayList<>();
    private final long[] counters = new long[VmEvent.values().length];
    private final Map<UserProcess, Long> reclaimCursorVa = new HashMap<>();
    private int reclaimCursorProcess;
    private int nextPid = 1000;

    /**
     * Boots a host: reserves the hugetlb pools and sets up the zones.
     *
     * @param config the boot settings.
     * @throws KernelException ENOMEM when the hugetlb pools cannot be reserved.
     * @throws NullPointerException when {@code config} is null.
     */
    public Host(final HostConfig config)
    {
        this.config = java.util.Objects.requireNonNull(config, "config");
        this.phys = new PhysicalMemory(config);
    }

    /**
     * Boots a host with the defaults of {@link HostConfig#builder()}.
     */
    public Host()
    {
        this(HostConfig.builder().build());
    }

    /**
     * @return the boot settings.
     */
    public HostConfig config()
    {
        return config;
    }

    /**
     * @return the physical memory.
     */
    public PhysicalMemory physicalMemory()
    {
        return phys;
    }

    /**
     * Starts a process with an empty address space, the default RLIMIT_MEMLOCK and no CAP_IPC_LOCK.
     *
     * @param name the process name.
     * @return the new process.
     */
    public UserProcess spawn(final String name)
    {
        return newProcess(name);
    }

    /**
     * @return the live processes, in order of creation.
     */
    public List<UserProcess> processes()
    {
        return List.copyOf(processes);
    }

    /**
     * @param event an event.
     * @return how many times it happened since boot.
     */
    public long counter(final VmEvent event)
    {
        return counters[event.ordinal()];
    }

    /**
     * @return every counter, in declaration order.
     */
    public Map<VmEvent, Long> counters()
    {
        final Map<VmEvent, Long> out = new EnumMap<>(VmEvent.class);
        for (final VmEvent e : VmEvent.values())
        {
            out.put(e, counters[e.ordinal()]);
        }
        return out;
    }

    /**
     * @param size a hugetlb size of the host ({@link BasePage#hugetlbSizes()}), or 2 MiB or 1 GiB.
     * @return the number of hugetlb pages of this size in the pool ({@code nr_hugepages}).
     * @throws KernelException EINVAL for another page size.
     */
    public long hugepagesTotal(final PageSize size)
    {
        checkHugePageSize(size);
        return phys.pool(size).totalPages();
    }

    /**
     * @param size 2 MiB or 1 GiB.
     * @return free pages in that pool ({@code free_hugepages}), reserved ones included.
     */
    public long hugepagesFree(final PageSize size)
    {
        checkHugePageSize(size);
        return phys.pool(size).freePages();
    }

    /**
     * @param size 2 MiB or 1 GiB.
     * @return pages of that pool promised to mappings but not yet faulted in ({@code resv_hugepages}).
     */
    public long hugepagesReserved(final PageSize size)
    {
        checkHugePageSize(size);
        return phys.pool(size).reservedPages();
    }

    /**
     * Reclaims memory as kswapd would under pressure: unpinned, unlocked, unshared anonymous pages are written to
     * swap (a THP is split first) and clean file pages are dropped, going round the processes from where the last
     * round stopped. Pinned frames are never touched.
     *
     * @param targetPages how many 4 KiB pages to try to free.
     * @return the number of 4 KiB pages freed (0 when nothing is reclaimable or swap is full).
     */
    public long reclaim(final long targetPages)
    {
        return reclaim(targetPages, null);
    }

    private long reclaim(final long targetPages, final Zone onlyZone)
    {
        final List<Notifiers.NotifyScope> scopes = new java.util.ArrayList<>();
        for (final UserProcess p : processes)
        {
            scopes.add(p.notifiers.openScope(MmuNotifyEvent.CLEAR, "reclaim"));
        }
        final List<UserProcess> scoped = List.copyOf(processes);
        try
        {
            return reclaimNow(targetPages, onlyZone);
        }
        finally
        {
            for (int i = 0; i < scoped.size(); i++)
            {
                scoped.get(i).notifiers.closeScope(scopes.get(i));
            }
        }
    }

    private long reclaimNow(final long targetPages, final Zone onlyZone)
    {
        long freed = 0;
        final int n = processes.size();
        for (int i = 0; i <= n && freed < targetPages && n > 0; i++)
        {
            final UserProcess p = processes.get(reclaimCursorProcess % n);
            final long from = reclaimCursorVa.getOrDefault(p, 0L);
            final long[] got = {0};
            final long freedBefore = freed;
            final long stoppedAt = p.pageTable().scanLeaves(from, UserProcess.TASK_SIZE, (va, entry, size) ->
            {
                if (PageTable.present(entry)
                    && (onlyZone == null || phys.zoneOf(PageTable.pfn(entry)) == onlyZone))
                {
                    got[0] += p.reclaim.reclaimLeaf(va, entry, size);
                }
                return freedBefore + got[0] < targetPages;
            });
            freed += got[0];
            if (stoppedAt >= UserProcess.TASK_SIZE)
            {
                reclaimCursorVa.remove(p);
                reclaimCursorProcess = (reclaimCursorProcess + 1) % n;
            }
            else
            {
                reclaimCursorVa.put(p, stoppedAt);
            }
        }
        return freed;
    }

    /**
     * Compacts memory as {@code echo 1 > /proc/sys/vm/compact_memory} does: in each zone, movable pages are
     * migrated from the bottom of the zone to free frames at its top, so that free memory coalesces into large
     * blocks. Pinned pages, hugetlb pages, pages of large folios and pages mapped by more than one process stay
     * where they are; the data behind every virtual address is unchanged.
     *
     * On a host of 16 or 64 KiB pages a base page moves as one folio, all its 4 KiB frames together.
     *
     * @return the number of 4 KiB pages migrated.
     */
    public long compact()
    {
        final List<Notifiers.NotifyScope> scopes = new java.util.ArrayList<>();
        final List<UserProcess> scoped = List.copyOf(processes);
        for (final UserProcess p : scoped)
        {
            scopes.add(p.notifiers.openScope(MmuNotifyEvent.CLEAR, "migration"));
        }
        try
        {
            return compactNow();
        }
        finally
        {
            for (int i = 0; i < scoped.size(); i++)
            {
                scoped.get(i).notifiers.closeScope(scopes.get(i));
            }
        }
    }

    private long compactNow()
    {
        long migrated = 0;
        // The 4 KiB leaves of every zone in one walk of the page tables: a zone's migrations move its own frames
        // only, so what the others map is the same when their turn comes.
        final Zone[] zones = Zone.values();
        final List<Map<Long, Object[]>> byZone = new ArrayList<>(zones.length);
        for (int z = 0; z < zones.length; z++)
        {
            byZone.add(new HashMap<>());
        }
        for (final UserProcess p : processes)
        {
            p.pageTable().forEachLeaf(0, UserProcess.TASK_SIZE, (va, entry, size) ->
            {
                if (PageTable.present(entry) && size == PageSize.SIZE_4K)
                {
                    final long pfn = PageTable.pfn(entry);
                    byZone.get(phys.zoneOf(pfn).ordinal()).put(pfn, new Object[] {p, va});
                }
            });
        }
        for (final Zone zone : zones)
        {
            final Map<Long, Object[]> singleMapper = byZone.get(zone.ordinal());
            final FrameTable frames = phys.frames();
            final TreeMap<Long, Object[]> candidates = new TreeMap<>();
            for (final Map.Entry<Long, Object[]> e : singleMapper.entrySet())
            {
                final long pfn = e.getKey();
                final byte kind = frames.kind(pfn);
                if (frames.order(pfn) != 0 || kind == FrameTable.KIND_HUGETLB || frames.mapCount(pfn) != 1)
                {
                    continue;
                }
                if (frames.pinCount(pfn) > 0)
                {
                    count(VmEvent.COMPACT_PINNED_SKIPPED);
                    continue;
                }
                candidates.put(pfn, e.getValue());
            }
            for (final Map.Entry<Long, Object[]> e : candidates.entrySet())
            {
                final long pfn = e.getKey();
                final long target = phys.allocateHighestIn(zone, pfn, frames.kind(pfn));
                if (target < 0)
                {
                    break;
                }
                migrateFrame(pfn, target, (UserProcess)e.getValue()[0], (Long)e.getValue()[1]);
                migrated++;
            }
            migrated += compactBasePages(zone);
        }
        return migrated;
    }

    /**
     * On a host of 16 or 64 KiB pages compaction moves whole base pages: each is a folio of PAGE_SIZE, and
     * migrate_pages moves a folio as one (mm/compaction.c {@code isolate_migratepages_block} isolates folios,
     * mm/migrate.c {@code migrate_folio}); a base page whose frames are not all mapped once by one process, or that
     * is pinned, stays.
     *
     * @return 4 KiB frames moved.
     */
    private long compactBasePages(final Zone zone)
    {
        final int baseOrder = config.basePage().order();
        if (baseOrder == 0)
        {
            return 0;
        }
        final FrameTable frames = phys.frames();
        final TreeMap<Long, Object[]> candidates = new TreeMap<>();
        final long baseBytes = config.basePage().bytes();
        for (final UserProcess p : processes)
        {
            p.pageTable().forEachLeaf(0, UserProcess.TASK_SIZE, (va, entry, size) ->
            {
                if (!PageTable.present(entry) || size != PageSize.SIZE_4K || (va & (baseBytes - 1)) != 0)
                {
                    return;
                }
                final long head = PageTable.pfn(entry);
                if (phys.zoneOf(head) != zone || frames.head(head) != head || frames.order(head) != baseOrder
                    || frames.kind(head) == FrameTable.KIND_HUGETLB)
                {
                    return;
                }
                if (frames.pinCount(head) > 0)
                {
                    count(VmEvent.COMPACT_PINNED_SKIPPED);
                    return;
                }
                for (int i = 0; i < 1 << baseOrder; i++)
                {
                    final long sub = p.pageTable().lookup(va + ((long)i << PhysicalMemory.FRAME_SHIFT));
                    if (!PageTable.present(sub) || PageTable.pfn(sub) != head + i || frames.mapCount(head + i) != 1)
                    {
                        return;
                    }
                }
                candidates.put(head, new Object[] {p, va});
            });
        }
        long moved = 0;
        for (final Map.Entry<Long, Object[]> e : candidates.entrySet())
        {
            final long head = e.getKey();
            final long target = phys.allocateHighestIn(zone, head, frames.kind(head), baseOrder);
            if (target < 0)
            {
                break;
            }
            migrateBasePage(head, target, (UserProcess)e.getValue()[0], (Long)e.getValue()[1]);
            moved += 1L << baseOrder;
        }
        return moved;
    }

    /**
     * Moves a base-page folio of a 16 or 64 KiB host, mapped once by {@code process} at {@code baseVa}, to the folio
     * at {@code newHead}, and frees the old one (mm/migrate.c {@code migrate_folio}).
     */
    void migrateBasePage(final long oldHead, final long newHead, final UserProcess process, final long baseVa)
    {
        final FrameTable frames = phys.frames();
        final int n = 1 << config.basePage().order();
        for (int i = 0; i < n; i++)
        {
            final long va = baseVa + ((long)i << PhysicalMemory.FRAME_SHIFT);
            frames.copyFrame(oldHead + i, newHead + i);
            final long entry = process.pageTable().lookup(va);
            process.pageTable().set(va, PageSize.SIZE_4K, PageTable.make(newHead + i, PageTable.flags(entry)));
        }
        frames.addMapCount(newHead, n, 1);
        frames.addMapCount(oldHead, n, -1);
        phys.freeFolio(oldHead);
        count(VmEvent.PGMIGRATE_SUCCESS, n);
    }

    private void checkHugePageSize(final PageSize size)
    {
        if (size == null || size != PageSize.SIZE_2M && size != PageSize.SIZE_1G
            && !config.basePage().hugetlbSizes().contains(size))
        {
            throw new KernelException(Errno.EINVAL, "a host of " + config.basePage().kb() + " KiB pages has hugetlb "
                + "pools of " + config.basePage().hugetlbSizes().stream().map(PageSize::word).toList() + ", not "
                + (size == null ? "null" : size.word()) + "; give a pool of one of those sizes");
        }
    }

    // ------------------------------------------------------------------ package-private

    UserProcess newProcess(final String name)
    {
        final UserProcess p = new UserProcess(this, nextPid++, name);
        processes.add(p);
        return p;
    }

    void removeProcess(final UserProcess p)
    {
        processes.remove(p);
        reclaimCursorVa.remove(p);
    }

    void count(final VmEvent event)
    {
        counters[event.ordinal()]++;
    }

    void count(final VmEvent event, final long n)
    {
        counters[event.ordinal()] += n;
    }

    /**
     * Allocates a folio, reclaiming when memory is short.
     *
     * @return the head frame, or -1 when nothing is free and reclaim frees nothing.
     */
    long allocate(final int order, final boolean allowMovable, final byte kind, final boolean mayReclaim)
    {
        long pfn = phys.allocateFolio(order, allowMovable, kind);
        while (pfn < 0 && mayReclaim)
        {
            final long freed = reclaim(Math.max(SWAP_CLUSTER_MAX, 1L << order), allowMovable ? null : Zone.NORMAL);
            if (freed == 0)
            {
                return -1;
            }
            pfn = phys.allocateFolio(order, allowMovable, kind);
        }
        return pfn;
    }

    /**
     * Moves the contents and every 4 KiB mapping of an order-0 frame to another frame and frees the old one
     * (mm/migrate.c {@code migrate_pages}).
     *
     * @param knownProcess the mapper when the caller knows it and the frame has a single mapping, else null.
     */
    void migrateFrame(final long oldPfn, final long newPfn, final UserProcess knownProcess, final long knownVa)
    {
        final FrameTable frames = phys.frames();
        frames.copyFrame(oldPfn, newPfn);
        final int mappers = frames.mapCount(oldPfn);
        if (mappers == 1 && knownProcess != null)
        {
            final long entry = knownProcess.pageTable().lookup(knownVa);
            knownProcess.pageTable().set(knownVa, PageSize.SIZE_4K, PageTable.make(newPfn, PageTable.flags(entry)));
        }
        else
        {
            for (final UserProcess p : processes)
            {
                p.reclaim.remapFrame(oldPfn, newPfn);
            }
        }
        frames.addMapCount(newPfn, mappers);
        frames.addMapCount(oldPfn, -mappers);
        phys.freeFolio(oldPfn);
        count(VmEvent.PGMIGRATE_SUCCESS);
    }

    void splitPmdsOfFolio(final long head)
    {
        for (final UserProcess p : processes)
        {
            p.reclaim.splitPmdsOfFolio(head);
        }
    }
}
