package dev.rnicsim.simnic;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.pagetable.MmuInterval;
import dev.rnicsim.pagetable.MmuRange;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.OdpCaps;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A simulated on-demand-paging MR (IBV_ACCESS_ON_DEMAND), explicit or implicit, with the driver work behind it
 * (drivers/infiniband/core/umem_odp.c, drivers/infiniband/hw/mlx5/odp.c):
 * <ul>
 *   <li>nothing is pinned and RLIMIT_MEMLOCK is not charged; an interval notifier watches the range;</li>
 *   <li>at registration only pages the CPU already has are mapped ({@code mlx5_ib_init_odp_mr}, no faulting);</li>
 *   <li>a device access to a block with no translation (or a read-only one, for a write) is a page fault:
 *       {@link #resolve} walks the process page table with {@code hmm_range_fault}, faulting pages in on the host,
 *       under the interval's sequence number, and walks again when an invalidation raced with it
 *       ({@code ib_umem_odp_map_dma_and_lock}); then the entries are written ({@code mlx5r_umr_update_xlt});</li>
 *   <li>before the host unmaps, migrates, reclaims, write-protects or copy-on-write-breaks a page, the notifier
 *       zaps the device's entries and invalidates its translation cache ({@code mlx5_ib_invalidate_range}); the
 *       next access faults again and finds the new page;</li>
 *   <li>an implicit MR covers the whole address space; each 1 GiB slot gets a child with its own MTT entries and
 *       its own interval notifier on the first fault in it ({@code implicit_get_child_mr}).</li>
 * </ul>
 * The device asks for write access whenever the MR is writable, as mlx5 does, so a fault on a copy-on-write page
 * of a writable MR breaks the sharing.
 *
 * <p>Not thread safe.
 */
public final class SimOdpMr extends FixedMr
{
    /** Most page-table walks one fault makes before giving up while invalidations keep racing with it (the kernel
     * loops until {@code HMM_RANGE_DEFAULT_TIMEOUT}, 1 s). */
    static final int MAX_WALKS = 16;
    /** Rights for which the device asks write access to the pages ({@code ib_access_writable}). */
    private static final Set<Access> WRITABLE = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_ATOMIC, Access.MW_BIND);

    private final UserProcess process;
    private final boolean implicit;
    private final int pageShift;
    private final boolean writable;
    /** Bytes the MR covers: its length, or the user address space for an implicit MR (whose length is SIZE_MAX). */
    private final long span;
    /** The explicit MR's interval; for an implicit MR, one per 1 GiB slot with a child. */
    private MmuInterval interval;
    private final Map<Long, MmuInterval> childIntervals = new HashMap<>();
    private long faults;
    private long entriesMapped;
    private long entriesZapped;
    private long lastOperation = Long.MIN_VALUE;

    SimOdpMr(final SimPd pd, final long addr, final long lengthBytes, final long iova, final int lkey,
        final int rkey, final Set<Access> access, final boolean implicit, final int pageShift)
    {
        super(pd, addr, lengthBytes, iova, lkey, rkey, access);
        this.process = pd.context().process();
        this.implicit = implicit;
        this.pageShift = pageShift;
        this.writable = access.stream().anyMatch(WRITABLE::contains);
        this.span = implicit ? UserProcess.TASK_SIZE : lengthBytes;
    }

    /** A ZERO_BASED MR presents offsets from its first byte, so its key-visible base is 0 (as a pinned one's). */
    @Override
    public long iova()
    {
        return access().contains(Access.ZERO_BASED) ? 0 : iova;
    }

    /** Installs the explicit MR's interval notifier and maps the pages already present; returns entries mapped. */
    long start()
    {
        if (implicit)
        {
            return 0;
        }
        interval = process.insertIntervalNotifier(addr, lengthBytes, this::invalidate);
        return map(addr, lengthBytes, false, false, writable).entries;
    }








    /**
     * @return true for an implicit MR (the whole address space).
     */
    public boolean isImplicit()
    {
        return implicit;
    }

    /**
     * @return log2 of the MR page size: 12, or the huge-page shift of an IBV_ACCESS_HUGETLB MR.
     */
    public int pageShift()
    {
        return pageShift;
    }

    /**
     * @return device page faults taken on this MR.
     */
    public long pageFaults()
    {
        return faults;
    }

    /**
     * @return MTT entries mapped since registration (snapshot, faults, prefetches).
     */
    public long entriesMapped()
    {
        return entriesMapped;
    }

    /**
     * @return MTT entries zapped by invalidations since registration.
     */
    public long entriesZapped()
    {
        return entriesZapped;
    }

    /**
     * @return 1 GiB children of an implicit MR now (0 for an explicit one).
     */
    public int implicitChildren()
    {
        return implicit && !closed ? pd.context().device().tables().implicitChildren(lkey) : 0;
    }

    /**
     * @param va a virtual address.
     * @return true when the device holds a translation of the page at {@code va} now.
     */
    public boolean deviceMapped(final long va)
    {
        if (closed || va < addr || va - addr >= span)
        {
            return false;
        }
        return pd.context().device().tables().firstUnmapped(lkey, iovaOf(va), 1, false) < 0;
    }

    /**
     * @param va a virtual address inside the MR.
     * @return the physical address the device would reach for {@code va} now, or -1 when it holds no translation.
     */
    public long devicePhysAddr(final long va)
    {
        if (!deviceMapped(va))
        {
            return -1;
        }
        return pd.context().device().tables().mappedDmaAddress(lkey, iovaOf(va));
    }

    @Override
    String kindName()
    {
        return implicit ? "an implicit ODP MR" : "an ODP MR";
    }


    @Override
    public void close()
    {
        pd.context().device().fabric().guardedRun(this::deregister);
    }

    private void deregister()
    {
        if (!closed)
        {
            pd.deregisterOdp(this);
        }
    }

    /** Stops the notifications; the tables entry is the caller's to free. */
    void markClosed()
    {
        closed = true;
        if (interval != null)
        {
            interval.remove();
        }
        for (final MmuInterval i : childIntervals.values())
        {
            i.remove();
        }
        childIntervals.clear();
    }

    // ------------------------------------------------------------------ driver work

    /** What one mapping pass did. */
    record Mapped(long entries, long pagesWalked, long minorFaults, long majorFaults, int walks, String failure,
        dev.rnicsim.verbs.Errno failureErrno)
    {
        Mapped(final long entries, final long pagesWalked, final long minorFaults, final long majorFaults,
            final int walks, final String failure)
        {
            this(entries, pagesWalked, minorFaults, majorFaults, walks, failure, dev.rnicsim.verbs.Errno.EFAULT);
        }
    }

    /**
     * Resolves a device page fault or a prefetch: maps {@code [va, va + bytes)} clipped to the MR.
     *
     * @param fault fault missing pages in (else only present pages: the snapshot and PREFETCH_NO_FAULT).
     * @param write ask for write access (only granted where the MR is writable).
     */
    Mapped map(final long va, final long bytes, final boolean fault, final boolean write)
    {
        return map(va, bytes, fault, write, write && writable);
    }

    private Mapped map(final long va, final long bytes, final boolean fault, final boolean write,
        final boolean grantWrite)
    {
        final long start = Math.max(va, addr);
        final long end = Math.min(va + bytes, addr + span);
        if (start >= end)
        {
            return new Mapped(0, 0, 0, 0, 0, null);
        }
        final SimDevice device = pd.context().device();
        final AdapterTables tables = device.tables();
        final long minorBefore = process.host().counter(VmEvent.PGFAULT) - process.host().counter(VmEvent.PGMAJFAULT);
        final long majorBefore = process.host().counter(VmEvent.PGMAJFAULT);
        long walked = 0;
        long mapped = 0;
        int walks = 0;
        String failure = null;
        dev.rnicsim.verbs.Errno failureErrno = dev.rnicsim.verbs.Errno.EFAULT;
        try
        {
            while (true)
            {
                // Taken anew for every walk: an invalidation during the last one may have destroyed an implicit child
                // and its notifier; the pages mapped now must be watched by a live one.
                final List<MmuInterval> watched = intervalsFor(start, end);
                walks++;
                final long[] seq = new long[watched.size()];
                for (int i = 0; i < seq.length; i++)
                {
                    seq[i] = watched.get(i).readBegin();
                }
                final List<long[]> pages = new ArrayList<>();
                walked += process.hmmRangeFault(start, end - start, fault, fault && grantWrite,
                    (pageVa, phys, pteWritable) -> pages.add(new long[] {pageVa, phys, pteWritable ? 1 : 0}));
                boolean raced = false;
                for (int i = 0; i < seq.length; i++)
                {
                    raced |= watched.get(i).readRetry(seq[i]);
                }
                if (raced && walks < MAX_WALKS)
                {
                    // mmu_interval_read_retry: an invalidation ran during the walk; its result may be stale.
                    device.count(SimCounter.ODP_FAULT_RETRIES, 1);
                    continue;
                }
                if (raced)
                {
                    failure = "invalidations kept racing with the page-table walk (" + walks + " walks)";
                    failureErrno = dev.rnicsim.verbs.Errno.EBUSY;
                    break;
                }
                final long mask = (1L << pageShift) - 1;
                if (pageShift > 12)
                {
                    for (final long[] p : pages)
                    {
                        final dev.rnicsim.pagetable.PageSize size = process.mappedPageSize(p[0]);
                        if (size != null && size.bytes() < (1L << pageShift))
                        {
                            // ib_umem_odp_map_dma_and_lock: a page mapped with a smaller order than the umem's page
                            // shift cannot be mapped (-EINVAL).
                            failureErrno = dev.rnicsim.verbs.Errno.EINVAL;
                            failure = "EINVAL: 0x" + Long.toHexString(p[0]) + " is mapped by a " + size.kb()
                                + " kB page, smaller than the " + ((1L << pageShift) >> 10) + " kB pages of this "
                                + "HUGETLB MR (ib_umem_odp_map_dma_and_lock)";
                            break;
                        }
                    }
                    if (failure != null)
                    {
                        break;
                    }
                }
                for (final long[] p : pages)
                {
                    // Every 4 KiB page of a huge block names the same block address; only the first write counts.
                    if (tables.mapOnDemand(lkey, iovaOf(p[0]), p[1] - (p[0] & mask), grantWrite && p[2] == 1))
                    {
                        mapped++;
                    }
                }
                break;
            }
        }
        catch (final KernelException e)
        {
            failure = e.getMessage();
            failureErrno = dev.rnicsim.verbs.Errno.of(e.errno().value());
        }
        catch (final TableException e)
        {
            failure = e.getMessage();
            failureErrno = dev.rnicsim.verbs.Errno.of(e.errno().value());
        }
        if (implicit)
        {
            dropChildlessIntervals(start, end);
        }
        entriesMapped += mapped;
        device.count(SimCounter.ODP_ENTRIES_MAPPED, mapped);
        final long major = process.host().counter(VmEvent.PGMAJFAULT) - majorBefore;
        final long minor = process.host().counter(VmEvent.PGFAULT) - process.host().counter(VmEvent.PGMAJFAULT)
            - minorBefore;
        return new Mapped(mapped, walked, minor, major, walks, failure, failureErrno);
    }

    /** Notifiers of 1 GiB slots in the range left without a child (nothing mapped there) go. */
    private void dropChildlessIntervals(final long start, final long end)
    {
        final SimDevice device = pd.context().device();
        final int shift = AdapterTables.IMPLICIT_CHILD_SHIFT;
        for (long slot = start >>> shift; slot <= (end - 1) >>> shift; slot++)
        {
            final MmuInterval i = childIntervals.get(slot);
            if (i != null && !device.tables().hasImplicitChild(lkey, slot))
            {
                childIntervals.remove(slot);
                i.remove();
            }
        }
    }

    /** The intervals covering the range: the explicit MR's, or the implicit children's (created as needed). */
    private List<MmuInterval> intervalsFor(final long start, final long end)
    {
        if (!implicit)
        {
            return List.of(interval);
        }
        final List<MmuInterval> list = new ArrayList<>();
        final int shift = AdapterTables.IMPLICIT_CHILD_SHIFT;
        for (long slot = start >>> shift; slot <= (end - 1) >>> shift; slot++)
        {
            MmuInterval i = childIntervals.get(slot);
            if (i == null)
            {
                final long base = slot << shift;
                final long length = Math.min(1L << shift, UserProcess.TASK_SIZE - base);
                i = process.insertIntervalNotifier(base, length, this::invalidate);
                childIntervals.put(slot, i);
            }
            list.add(i);
        }
        return list;
    }

    /**
     * The device page fault the DMA engine raised: checks the transport's ODP capability for the operation, maps
     * the range, counts and prices it.
     *
     * @return null when resolved, else why not.
     */
    String resolve(final long faultIova, final long bytes, final boolean write, final boolean remote,
        final int odpOperation)
    {
        final SimDevice device = pd.context().device();
        faults++;
        device.count(SimCounter.ODP_PAGE_FAULTS, 1);
        final OdpCaps caps = device.profile().attributes().odpCaps();
        if ((caps.rcOdpCaps() & odpOperation) == 0)
        {
            device.count(SimCounter.ODP_PAGE_FAULT_FAILURES, 1);
            return "rc_odp_caps=0x" + Integer.toHexString(caps.rcOdpCaps()) + " of " + device.profile().name()
                + " lacks IBV_ODP_SUPPORT_" + odpOperationName(odpOperation) + " (0x"
                + Integer.toHexString(odpOperation) + "): this operation cannot fault on an ODP MR on RC QPs";
        }
        final long va = vaOf(faultIova);
        final Mapped m = map(va, bytes, true, write || writable);
        final long ns = device.fabric().costModel().odpFaultNs(m.pagesWalked(), m.minorFaults(), m.majorFaults(),
            m.entries());
        final Map<String, Object> args = new java.util.LinkedHashMap<>();
        args.put("lkey", lkey);
        args.put("va", va);
        args.put("length", bytes);
        args.put("side", remote ? "responder" : "requester");
        args.put("entries_mapped", m.entries());
        args.put("host_minor_faults", m.minorFaults());
        args.put("host_major_faults", m.majorFaults());
        args.put("walks", m.walks());
        if (m.failure() != null)
        {
            args.put("failure", m.failure());
        }
        if (remote)
        {
            // The responder handles the fault while the requester waits out RNR NAKs: the time is the requester's.
            device.fabric().overlap(device, "odp_page_fault", "odp", device.fabric().clock().nowNs(), ns, args);
            device.keys().addRemoteFaultNs(ns);
        }
        else
        {
            device.fabric().span(device, "odp_page_fault", "odp", ns, args);
        }
        if (m.failure() != null)
        {
            device.count(SimCounter.ODP_PAGE_FAULT_FAILURES, 1);
            return m.failure();
        }
        return null;
    }

    private static String odpOperationName(final int bit)
    {
        return switch (bit)
        {
            case OdpCaps.SEND -> "SEND";
            case OdpCaps.RECV -> "RECV";
            case OdpCaps.WRITE -> "WRITE";
            case OdpCaps.READ -> "READ";
            case OdpCaps.ATOMIC -> "ATOMIC";
            default -> "0x" + Integer.toHexString(bit);
        };
    }

    /** The interval notifier's callback: zap the device's entries of the leaf before the host changes it. */
    private void invalidate(final MmuInterval watched, final MmuRange range)
    {
        if (closed)
        {
            return;
        }
        final SimDevice device = pd.context().device();
        final long start = Math.max(range.startVa(), addr);
        final long end = Math.min(range.endVa(), addr + span);
        if (start >= end)
        {
            return;
        }
        // Writes still in flight land before the device lets the page go.
        device.writeOrdering().drain();
        final int shift = AdapterTables.IMPLICIT_CHILD_SHIFT;
        final List<Long> childrenBefore = new ArrayList<>();
        if (implicit)
        {
            for (long slot = start >>> shift; slot <= (end - 1) >>> shift; slot++)
            {
                if (device.tables().hasImplicitChild(lkey, slot))
                {
                    childrenBefore.add(slot);
                }
            }
        }
        final long zapped = device.tables().zapOnDemand(lkey, iovaOf(start), end - start);
        for (final long slot : childrenBefore)
        {
            // A child the zap left with no page mapped was destroyed with its MTT entries; its notifier goes too.
            final MmuInterval child = childIntervals.get(slot);
            if (child != null && !device.tables().hasImplicitChild(lkey, slot))
            {
                childIntervals.remove(slot);
                child.remove();
            }
        }
        if (zapped == 0)
        {
            return;
        }
        entriesZapped += zapped;
        device.count(SimCounter.ODP_PAGE_INVALIDATIONS, zapped);
        // The kernel calls the notifier once per operation; the model tells it leaf by leaf, so the stall is
        // priced once per operation and the zapped entries one by one.
        final boolean newOperation = range.operationId() != lastOperation;
        lastOperation = range.operationId();
        final CostModel cost = device.fabric().costModel();
        final long ns = newOperation ? cost.odpInvalidationNs(zapped) : zapped * cost.mttWritePerEntryNs();
        if (newOperation)
        {
            device.count(SimCounter.KEY_INVALIDATIONS, 1);
        }
        device.fabric().span(device, "odp_invalidate", "invalidation", ns, Map.of("lkey", lkey, "cause",
            range.reason(), "event", range.event().name(), "va", start, "length", end - start, "entries_zapped",
            zapped));
        device.observe(o -> o.odpInvalidated(this, start, end - start, range.reason()));
    }

    long iovaOf(final long va)
    {
        return iova + (va - addr);
    }

    long vaOf(final long anIova)
    {
        return addr + (anIova - iova);
    }

    @Override
    public String toString()
    {
        return (implicit ? "implicit ODP MR" : "ODP MR") + "[addr=0x" + Long.toHexString(addr) + " length="
            + Long.toUnsignedString(lengthBytes) + " iova=0x" + Long.toHexString(iova) + " lkey=0x"
            + Integer.toHexString(lkey) + " rkey=0x" + Integer.toHexString(rkey) + " access=" + access + "]";
    }
}
