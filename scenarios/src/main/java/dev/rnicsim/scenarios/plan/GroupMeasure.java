package dev.rnicsim.scenarios.plan;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
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
 * <p>Stateless; each call builds its own simulated fabric. Not thread safe (the fabric is not).
 */
final class GroupMeasure
{
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
     */
    record One(String kind, long pageSizeBytes, long mttEntries, long mttReserved, long pinnedBytes, long regNs,
        long deregNs, long bar1Bytes, long gpuBytes, long samples, String refusal)
    {
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
        final SimFabric fabric = new SimFabric();
        final long samples = Math.min(g.count(), Planner.SAMPLE_MRS);
        final long sliceSize = Math.min(g.sizeBytes(), Planner.SAMPLE_REGION_BYTES);
        final boolean hugetlb = g.backing().equals("2m") || g.backing().equals("1g");
        final long spacers = hugetlb && worst ? 2 : 1;
        final long pages2M = g.backing().equals("2m") ? spacers * samples * ceilDiv(sliceSize, 2L << 20) : 0;
        final long pages1G = g.backing().equals("1g") ? spacers * samples * ceilDiv(sliceSize, 1L << 30) : 0;
        final long ram = Math.min(HostConfig.MAX_PHYSICAL_MEMORY_BYTES, Math.max(host.ramBytes(),
            samples * sliceSize + pages2M * (2L << 20) + pages1G * (1L << 30) + (1L << 30)));
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
                return implicit(d, c, pd, access, g, sliceSize);
            }
            final SimGpu gpu = g.backing().equals("gpu") ? h.addGpu("plan-gpu", Math.min(SimGpu.MAX_VRAM_BYTES,
                samples * align(sliceSize, 1L << 30) + (1L << 30)), 1L << 50, GpuTopology.PIX) : null;
            h.peerMemoryClient("peer-memory".equals(g.gpu()));
            MemoryRegion last = null;
            long regNs = 0;
            long mttBefore = 0;
            for (long i = 0; i < samples; i++)
            {
                mttBefore = d.tables().mtt().counters().entriesInUse();
                last = gpu != null ? gpuMr(gpu, pd, sliceSize, access, "dmabuf".equals(g.gpu()))
                    : hostMr(c, p, pd, g, sliceSize, access, worst && hugetlb);
                regNs = lastEvent(d).durationNs();
            }
            long reserved = d.tables().mtt().counters().entriesInUse() - mttBefore;
            final long entries;
            final long pageSize;
            final long pinned;
            long bar1 = 0;
            long vram = 0;
            switch (last)
            {
                case SimMr m ->
                {
                    entries = m.mttEntries();
                    reserved = m.mttEntriesReserved();
                    pageSize = m.pageSizeBytes();
                    pinned = m.pinnedPages() << 12;
                }
                case SimOdpMr m ->
                {
                    entries = reserved;
                    pageSize = 1L << m.pageShift();
                    pinned = 0;
                }
                case SimPeerMr m ->
                {
                    entries = m.mttEntries();
                    reserved = d.tables().mtt().reservedFor(entries);
                    pageSize = 1L << d.tables().pageShift(m.lkey());
                    pinned = 0;
                    bar1 = m.bar1MappedBytes();
                    vram = m.buffer().sizeBytes();
                }
                default -> throw new IllegalStateException("unexpected MR " + last);
            }
            last.close();
            final long deregNs = lastEvent(d).durationNs();
            final One one = new One(kind, pageSize, entries, reserved, pinned, regNs, deregNs, bar1, vram, samples,
                null);
            return sliceSize < g.sizeBytes() ? scaled(one, g, sliceSize, fabric, d) : one;
        }
        catch (final VerbsException e)
        {
            return new One(kind, 0, 0, 0, 0, 0, 0, 0, 0, 0, e.getMessage());
        }
    }

    /** A region of host memory, touched as the application would, registered with ibv_reg_mr. */
    private static MemoryRegion hostMr(final SimContext c, final UserProcess p, final ProtectionDomain pd,
        final Workload.Group g, final long sliceSize, final Set<Access> access, final boolean scatter)
    {
        final Backing backing = switch (g.backing())
        {
            case "thp" -> Backing.TRANSPARENT_HUGE_PAGES;
            case "2m" -> Backing.HUGETLB_2M;
            case "1g" -> Backing.HUGETLB_1G;
            default -> Backing.BASE_PAGES;
        };
        final long addr = c.memory().allocate(sliceSize, backing);
        if (backing == Backing.TRANSPARENT_HUGE_PAGES)
        {
            p.touch(addr, sliceSize, true);
        }
        if (scatter)
        {
            // A second mapping faulted page by page in step with the region: the pool hands out pages in
            // physical order, so every page of the region has a page of the other mapping between it and the next.
            final long page = backing == Backing.HUGETLB_2M ? 2L << 20 : 1L << 30;
            final long spacer = c.memory().allocate(sliceSize, backing);
            for (long off = 0; off < sliceSize; off += page)
            {
                p.touch(addr + off, 1, true);
                p.touch(spacer + off, 1, true);
            }
        }
        return g.iovaAlignBytes() == 0 ? pd.regMr(addr, sliceSize, access)
            : pd.regMr(addr, sliceSize, g.iovaAlignBytes() + (addr & 4095), access);
    }

    /** A GPU buffer registered through the peer-memory client or as a dma-buf. */
    private static MemoryRegion gpuMr(final SimGpu gpu, final ProtectionDomain pd, final long sliceSize,
        final Set<Access> access, final boolean dmabuf)
    {
        final GpuBuffer b = gpu.allocate(sliceSize);
        if (!dmabuf)
        {
            return pd.regMr(b.gpuVa(), sliceSize, access);
        }
        final int fd = gpu.exportDmabuf(b, 0, sliceSize);
        return pd.regDmabufMr(0, sliceSize, b.gpuVa(), fd, access);
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
        final Backing backing = switch (g.backing())
        {
            case "thp" -> Backing.TRANSPARENT_HUGE_PAGES;
            case "2m" -> Backing.HUGETLB_2M;
            case "1g" -> Backing.HUGETLB_1G;
            default -> Backing.BASE_PAGES;
        };
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
