package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.scenarios.script.BackingWords;
import dev.rnicsim.scenarios.script.Spec;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.GpuTopology;
import dev.rnicsim.simnic.RegistrationEvent;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimGpu;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.simnic.SimMr;
import dev.rnicsim.simnic.SimOdpMr;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Measures what one MR of a group costs by registering up to {@link Planner#SAMPLE_MRS} regions of it on a fresh
 * simulated host and device, through the registration path of its kind:
 * <ul>
 *   <li>host memory ({@code 4k}, {@code thp}, {@code 2m}, {@code 1g}): {@code ibv_reg_mr} on an aged host
 *       (pinning, page-size choice, MTT allocation with its rounding, MPT); a hugetlb group twice, once on pool
 *       pages handed out in physical order (best case: contiguous pages that mlx5 merges into larger MR pages,
 *       {@code mlx5_umem_find_best_pgsz}) and once with a page of another mapping between every two of its pages
 *       (worst case: no two pages adjacent);</li>
 *   <li>{@code odp}: {@code ibv_reg_mr} with IBV_ACCESS_ON_DEMAND ({@code create_user_odp_mr}: MTT entries for the
 *       whole range, nothing pinned, RLIMIT_MEMLOCK not charged);</li>
 *   <li>{@code implicit}: an implicit ODP MR (addr 0, length SIZE_MAX, {@code mlx5_ib_alloc_implicit_mr}), then
 *       {@code ibv_advise_mr} PREFETCH_WRITE over the bytes the group reaches, which creates the 1 GiB children and
 *       their MTT entries ({@code implicit_get_child_mr});</li>
 *   <li>{@code gpu}: a GPU buffer registered through a peer-memory client ({@code ibv_reg_mr} on its GPU virtual
 *       address, nvidia-peermem) or exported as a dma-buf ({@code ibv_reg_dmabuf_mr}), each mapping BAR1.</li>
 * </ul>
 * A region above {@link Planner#SAMPLE_REGION_BYTES} is measured on a slice of that size and scaled. A device that
 * refuses the registration (no ODP, no dma-buf) gives a result with the refusal and no figures.
 *
 * <p>Stateless and thread safe: each call builds its own simulated fabrics, each used by one thread.
 */
final class GroupMeasure
{
    /** Simulated hosts an exact measurement of a group shares its regions between, one thread each. */
    private static final int EXACT_SHARES = 2;
    /** Bytes one PREFETCH advice covers when an implicit group is measured. */
    private static final long PREFETCH_CHUNK_BYTES = 256L << 20;

    private GroupMeasure()
    {
    }

    /**
     * One MR of a group as measured.
     *
     * @param kind            {@code pinned}, {@code odp}, {@code odp-implicit}, {@code peer-memory} or
     *                        {@code dmabuf}.
     * @param pageSizeBytes   MR page size the driver chose.
     * @param mttEntries      MTT entries one MR writes.
     * @param mttReserved     MTT entries one MR reserves.
     * @param pinnedBytes     host bytes one MR pins.
     * @param regNs           simulated registration time, in ns.
     * @param deregNs         simulated deregistration time, in ns.
     * @param bar1Bytes       GPU BAR1 bytes one MR maps.
     * @param gpuBytes        VRAM bytes one MR's buffer takes.
     * @param samples         MRs registered to measure it (0: refused).
     * @param refusal         the device's refusal, or null.
     * @param minMttEntries   the fewest MTT entries any MR of the group wrote ({@code mttEntries} when sampled).
     */
    record One(String kind, long pageSizeBytes, long mttEntries, long mttReserved, long pinnedBytes, long regNs,
        long deregNs, long bar1Bytes, long gpuBytes, long samples, String refusal, long minMttEntries)
    {
        One(final String kind, final long pageSizeBytes, final long mttEntries, final long mttReserved,
            final long pinnedBytes, final long regNs, final long deregNs, final long bar1Bytes, final long gpuBytes,
            final long samples, final String refusal)
        {
            this(kind, pageSizeBytes, mttEntries, mttReserved, pinnedBytes, regNs, deregNs, bar1Bytes, gpuBytes,
                samples, refusal, mttEntries);
        }
    }

    /**
     * @param profile the device (capacity limits lifted).
     * @param host    the host.
     * @param g       the group.
     * @param worst   for hugetlb groups: no two huge pages physically adjacent (else handed out in order).
     * @return one MR's figures.
     */
    static One measure(final DeviceProfile profile, final Planner.HostSpec host, final Workload.Group g,
        final boolean worst)
    {
        return run(profile, host, g, worst, false);
    }

    /**
     * Registers every region of the group, whole, one after the other: each is registered, read, deregistered and
     * freed before the next, so a simulated host holds one region at a time; the regions are shared between two
     * simulated hosts measured on two threads. The figures are the largest of any MR (MTT entries, pins, time),
     * with the smallest MTT count beside them.
     *
     * @param profile the device (capacity limits lifted).
     * @param host    the host.
     * @param g       the group.
     * @param worst   for hugetlb groups: no two huge pages physically adjacent.
     * @return one MR's figures (the largest), with {@link One#samples()} equal to the group's count.
     */
    static One exact(final DeviceProfile profile, final Planner.HostSpec host, final Workload.Group g,
        final boolean worst)
    {
        if (g.count() < EXACT_SHARES || g.implicit())
        {
            return run(profile, host, g, worst, true);
        }
        // The regions are registered one at a time, each alone on the host: two simulated hosts take half each, on
        // two threads (each fabric is used by one thread only). Always two shares, whatever the machine, so that
        // the figures do not depend on it.
        final long half = g.count() / EXACT_SHARES;
        final List<One> parts = java.util.stream.Stream.of(g.with(half, g.sizeBytes(), g.backing()),
            g.with(g.count() - half, g.sizeBytes(), g.backing())).parallel()
            .map(part -> run(profile, host, part, worst, true)).toList();
        final One a = parts.get(0);
        final One b = parts.get(1);
        if (a.refusal() != null || b.refusal() != null)
        {
            return a.refusal() != null ? a : b;
        }
        return new One(a.kind(), Math.min(a.pageSizeBytes(), b.pageSizeBytes()), Math.max(a.mttEntries(),
            b.mttEntries()), Math.max(a.mttReserved(), b.mttReserved()), Math.max(a.pinnedBytes(), b.pinnedBytes()),
            Math.max(a.regNs(), b.regNs()), Math.max(a.deregNs(), b.deregNs()), Math.max(a.bar1Bytes(),
            b.bar1Bytes()), Math.max(a.gpuBytes(), b.gpuBytes()), a.samples() + b.samples(), null,
            Math.min(a.minMttEntries(), b.minMttEntries()));
    }

    private static One run(final DeviceProfile profile, final Planner.HostSpec host, final Workload.Group g,
        final boolean worst, final boolean exact)
    {
        final SimFabric fabric = new SimFabric();
        final long samples = exact ? g.count() : Math.min(g.count(), Planner.SAMPLE_MRS);
        final long live = exact ? 1 : samples;
        final long sliceSize = exact ? g.sizeBytes() : Math.min(g.sizeBytes(), Planner.SAMPLE_REGION_BYTES);
        final boolean hugetlb = g.backing().equals("2m") || g.backing().equals("1g");
        final long spacers = hugetlb && worst ? 2 : 1;
        final long pages2M = g.backing().equals("2m") ? spacers * live * ceilDiv(sliceSize, 2L << 20) : 0;
        final long pages1G = g.backing().equals("1g") ? spacers * live * ceilDiv(sliceSize, 1L << 30) : 0;
        final long ram = Math.min(HostConfig.MAX_PHYSICAL_MEMORY_BYTES, Math.max(host.ramBytes(),
            live * sliceSize + pages2M * (2L << 20) + pages1G * (1L << 30) + (1L << 30)));
        final SimHost h = fabric.addHost("plan", HostConfig.builder().physicalMemoryBytes(align(ram, 1L << 30))
            .hugepages2M(pages2M).hugepages1G(pages1G).maxMapCount(1 << 20).aged(true).build());
        final SimDevice d = h.addDevice("sim:plan/" + profile.name(), profile);
        final UserProcess p = h.host().spawn("planner").capIpcLock(true);
        final String kind = g.backing().equals("gpu") ? g.gpu() : g.implicit() ? "odp-implicit"
            : g.onDemand() ? "odp" : "pinned";
        try (SimContext c = d.open(p))
        {
            final ProtectionDomain pd = c.allocPd();
            final Set<Access> access = EnumSet.copyOf(Spec.accessFlags(g.access()));
            if (g.implicit())
            {
                return exact ? implicitExact(d, c, pd, access, g) : implicit(d, c, pd, access, g, sliceSize);
            }
            final SimGpu gpu = g.backing().equals("gpu") ? h.addGpu("plan-gpu", Math.min(SimGpu.MAX_VRAM_BYTES,
                live * align(sliceSize, 1L << 30) + (1L << 30)), 1L << 50, GpuTopology.PIX) : null;
            h.peerMemoryClient("peer-memory".equals(g.gpu()));
            if (exact)
            {
                return everyRegion(d, c, p, pd, gpu, g, access, worst && hugetlb, kind);
            }
            Region last = null;
            long regNs = 0;
            long mttBefore = 0;
            for (long i = 0; i < samples; i++)
            {
                mttBefore = d.tables().mtt().counters().entriesInUse();
                last = gpu != null ? gpuMr(gpu, pd, sliceSize, access, "dmabuf".equals(g.gpu()))
                    : hostMr(c, p, pd, g, sliceSize, access, worst && hugetlb);
                regNs = lastEvent(d).durationNs();
            }
            final Figures f = read(d, last.mr(), d.tables().mtt().counters().entriesInUse() - mttBefore);
            last.mr().close();
            final long deregNs = lastEvent(d).durationNs();
            final long entries = f.entries();
            final long reserved = f.reserved();
            final long pageSize = f.pageSize();
            final long pinned = f.pinned();
            final long bar1 = f.bar1();
            final long vram = f.vram();
            final One one = new One(kind, pageSize, entries, reserved, pinned, regNs, deregNs, bar1, vram, samples,
                null);
            return sliceSize < g.sizeBytes() ? scaled(one, g, sliceSize, fabric, d) : one;
        }
        catch (final VerbsException e)
        {
            return new One(kind, 0, 0, 0, 0, 0, 0, 0, 0, 0, e.getMessage());
        }
    }

    /** What one MR takes, read off the simulated MR and tables. */
    private record Figures(long entries, long reserved, long pageSize, long pinned, long bar1, long vram)
    {
    }

    /** A registered region, and how to give its memory back. */
    private record Region(MemoryRegion mr, Runnable free)
    {
    }

    /** One MR's figures; {@code reservedNow} is the MTT entries its registration took from the allocator. */
    private static Figures read(final SimDevice d, final MemoryRegion mr, final long reservedNow)
    {
        return switch (mr)
        {
            case SimMr m -> new Figures(m.mttEntries(), m.mttEntriesReserved(), m.pageSizeBytes(),
                m.pinnedPages() << 12, 0, 0);
            case SimOdpMr m -> new Figures(reservedNow, reservedNow, 1L << m.pageShift(), 0, 0, 0);
            case SimPeerMr m -> new Figures(m.mttEntries(), d.tables().mtt().reservedFor(m.mttEntries()),
                1L << d.tables().pageShift(m.lkey()), 0, m.bar1MappedBytes(), m.buffer().sizeBytes());
            default -> throw new IllegalStateException("unexpected MR " + mr);
        };
    }

    /**
     * --exact: every region of the group, whole, registered, read, deregistered and freed in turn; the largest
     * figures of any MR, the smallest MTT count as {@link One#minMttEntries()}.
     */
    private static One everyRegion(final SimDevice d, final SimContext c, final UserProcess p,
        final ProtectionDomain pd, final SimGpu gpu, final Workload.Group g, final Set<Access> access,
        final boolean scatter, final String kind)
    {
        long entries = 0;
        long minEntries = Long.MAX_VALUE;
        long reserved = 0;
        long pageSize = Long.MAX_VALUE;
        long pinned = 0;
        long regNs = 0;
        long deregNs = 0;
        long bar1 = 0;
        long vram = 0;
        for (long i = 0; i < g.count(); i++)
        {
            final long before = d.tables().mtt().counters().entriesInUse();
            final Region r = gpu != null ? gpuMr(gpu, pd, g.sizeBytes(), access, "dmabuf".equals(g.gpu()))
                : hostMr(c, p, pd, g, g.sizeBytes(), access, scatter);
            regNs = Math.max(regNs, lastEvent(d).durationNs());
            final Figures f = read(d, r.mr(), d.tables().mtt().counters().entriesInUse() - before);
            entries = Math.max(entries, f.entries());
            minEntries = Math.min(minEntries, f.entries());
            reserved = Math.max(reserved, f.reserved());
            pageSize = Math.min(pageSize, f.pageSize());
            pinned = Math.max(pinned, f.pinned());
            bar1 = Math.max(bar1, f.bar1());
            vram = Math.max(vram, f.vram());
            r.mr().close();
            deregNs = Math.max(deregNs, lastEvent(d).durationNs());
            r.free().run();
        }
        return new One(kind, pageSize, entries, reserved, pinned, regNs, deregNs, bar1, vram, g.count(), null,
            minEntries);
    }

    /** --exact for implicit groups: each implicit MR registered, prefetched over the group's whole size, closed. */
    private static One implicitExact(final SimDevice d, final SimContext c, final ProtectionDomain pd,
        final Set<Access> access, final Workload.Group g)
    {
        One most = null;
        for (long i = 0; i < g.count(); i++)
        {
            final One one = implicit(d, c, pd, access, g, g.sizeBytes());
            most = most == null || one.mttEntries() > most.mttEntries() ? one : most;
        }
        return new One(most.kind(), most.pageSizeBytes(), most.mttEntries(), most.mttReserved(), 0, most.regNs(),
            most.deregNs(), 0, 0, g.count(), null, most.mttEntries());
    }

    /** A region of host memory, touched as the application would, registered with ibv_reg_mr. */
    private static Region hostMr(final SimContext c, final UserProcess p, final ProtectionDomain pd,
        final Workload.Group g, final long sliceSize, final Set<Access> access, final boolean scatter)
    {
        final Backing backing = BackingWords.of(g.backing());
        final long addr = c.memory().allocate(sliceSize, backing);
        if (backing == Backing.TRANSPARENT_HUGE_PAGES)
        {
            p.touch(addr, sliceSize, true);
        }
        final long spacer = scatter ? c.memory().allocate(sliceSize, backing) : 0;
        if (scatter)
        {
            // A second mapping faulted page by page in step with the region: the pool hands out pages in
            // physical order, so every page of the region has a page of the other mapping between it and the next.
            final long page = backing == Backing.HUGETLB_2M ? 2L << 20 : 1L << 30;
            for (long off = 0; off < sliceSize; off += page)
            {
                p.touch(addr + off, 1, true);
                p.touch(spacer + off, 1, true);
            }
        }
        final MemoryRegion mr = g.iovaAlignBytes() == 0 ? pd.regMr(addr, sliceSize, access)
            : pd.regMr(addr, sliceSize, g.iovaAlignBytes() + (addr & 4095), access);
        return new Region(mr, () ->
        {
            c.memory().free(addr, sliceSize);
            if (spacer != 0)
            {
                c.memory().free(spacer, sliceSize);
            }
        });
    }

    /** A GPU buffer registered through the peer-memory client or as a dma-buf. */
    private static Region gpuMr(final SimGpu gpu, final ProtectionDomain pd, final long sliceSize,
        final Set<Access> access, final boolean dmabuf)
    {
        final GpuBuffer b = gpu.allocate(sliceSize);
        if (!dmabuf)
        {
            return new Region(pd.regMr(b.gpuVa(), sliceSize, access), () -> gpu.free(b));
        }
        final int fd = gpu.exportDmabuf(b, 0, sliceSize);
        return new Region(pd.regDmabufMr(0, sliceSize, b.gpuVa(), fd, access), () ->
        {
            gpu.closeDmabuf(fd);
            gpu.free(b);
        });
    }

    /**
     * An implicit ODP MR, then PREFETCH_WRITE over a region of the group's size (or a slice): the children it gets
     * and their MTT entries.
     */
    private static One implicit(final SimDevice d, final SimContext c, final ProtectionDomain pd,
        final Set<Access> access, final Workload.Group g, final long sliceSize)
    {
        final long before = d.tables().mtt().counters().entriesInUse();
        final SimOdpMr mr = (SimOdpMr)pd.regMr(0, -1L, access);
        final long regNs = lastEvent(d).durationNs();
        final Backing backing = BackingWords.of(g.backing());
        final long addr = c.memory().allocate(sliceSize, backing);
        for (long off = 0; off < sliceSize; off += PREFETCH_CHUNK_BYTES)
        {
            pd.adviseMr(MrAdvice.PREFETCH_WRITE, 0, List.of(new Sge(addr + off, Math.min(PREFETCH_CHUNK_BYTES,
                sliceSize - off), mr.lkey())));
        }
        final long reserved = d.tables().mtt().counters().entriesInUse() - before;
        final long children = mr.implicitChildren();
        final long scale = ceilDiv(g.sizeBytes(), sliceSize);
        mr.close();
        final long deregNs = lastEvent(d).durationNs();
        final long entries = children * AdapterTables.IMPLICIT_CHILD_ENTRIES * scale;
        return new One("odp-implicit", 4096, entries, reserved * scale, 0, regNs, deregNs, 0, 0, 1, null);
    }

    /** One MR of a region above the slice: MTT entries, pins and the cost model's price scale with the size. */
    private static One scaled(final One one, final Workload.Group g, final long sliceSize, final SimFabric fabric,
        final SimDevice d)
    {
        final double scale = (double)g.sizeBytes() / sliceSize;
        final long entries = (long)Math.ceil(one.mttEntries() * scale);
        final long pages = ceilDiv(g.sizeBytes(), 4096);
        final long leafBytes = switch (g.backing())
        {
            case "thp", "2m" -> 2L << 20;
            case "1g" -> 1L << 30;
            default -> 4096;
        };
        final boolean pinnedKind = one.kind().equals("pinned");
        return new One(one.kind(), one.pageSizeBytes(), entries, d.tables().mtt().reservedFor(entries),
            pinnedKind ? pages << 12 : 0, pinnedKind ? fabric.costModel().registrationNs(pages,
            ceilDiv(g.sizeBytes(), leafBytes), entries) : (long)Math.ceil(one.regNs() * scale),
            pinnedKind ? fabric.costModel().deregistrationNs(pages) : one.deregNs(),
            (long)Math.ceil(one.bar1Bytes() * scale), (long)Math.ceil(one.gpuBytes() * scale), one.samples(), null);
    }

    private static RegistrationEvent lastEvent(final SimDevice d)
    {
        final List<RegistrationEvent> trace = d.recentRegistrations();
        return trace.get(trace.size() - 1);
    }

    static long ceilDiv(final long a, final long b)
    {
        return (a + b - 1) / b;
    }

    static long align(final long v, final long a)
    {
        return (v + a - 1) / a * a;
    }
}
