package dev.rnicsim.simnic;

import dev.rnicsim.mtt.DmaRun;
import dev.rnicsim.mtt.RegisteredMr;
import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A PD's MRs over GPU memory, by the two routes the kernel offers. A peer-memory client ({@code ib_peer_mem}, as
 * nvidia-peermem plugs into {@code ib_umem_get}) lets {@code ibv_reg_mr} pin GPU virtual addresses and map them
 * through BAR1; {@code ibv_reg_dmabuf_mr} imports an exporter's dma-buf ({@code ib_umem_dmabuf_get},
 * drivers/infiniband/core/umem_dmabuf.c), pinned or with a dynamic attachment as the driver does (mlx5
 * {@code mlx5_ib_reg_user_mr_dmabuf}). Nothing is left behind on failure.
 *
 * <p>Not thread safe.
 */
final class PeerMemRegistration
{
    private static final String REG = UmemRegistration.REG;
    /** Shift of the 4 KiB pages a dynamic dma-buf attachment is mapped in, as an ODP MR's. */
    private static final int PAGE_SHIFT_4K = 12;
    /** The page size a GPU MR's events record: its translation is kept in 4 KiB pages of contiguous VRAM. */
    private static final long GPU_MR_PAGE_BYTES = 1L << PAGE_SHIFT_4K;

    /** Access flags ibv_reg_dmabuf_mr accepts (ibv_reg_mr(3)). */
    private static final Set<Access> DMABUF_ACCESS = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.RELAXED_ORDERING);

    private final SimPd pd;
    private final SimContext context;
    private final int pdNum;
    private final Set<SimPeerMr> peerMrs = new LinkedHashSet<>();

    PeerMemRegistration(final SimPd pd)
    {
        this.pd = pd;
        this.context = pd.context();
        this.pdNum = pd.pdNum();
    }

    /**
     * ibv_reg_mr on a GPU virtual address: without a peer-memory client the kernel finds no pinnable pages there
     * (EFAULT); with one the client pins the GPU pages and maps them through BAR1 (EFAULT when it is full).
     */
    SimPeerMr registerPeerMemory(final GpuBuffer b, final long addr, final long lengthBytes, final long iova,
        final Set<Access> rights)
    {
        final SimDevice device = context.device();
        final long offset = addr - b.gpuVa();
        if (!device.host().peerMemoryClient())
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, Errno.EFAULT, "0x" + Long.toHexString(addr) + " is memory of GPU " + b.gpu().name()
                + ", not host memory: no peer-memory client (nvidia-peermem) is loaded, so ib_umem_get finds no "
                + "pages to pin; load one or register through ibv_reg_dmabuf_mr");
        }
        if (Long.compareUnsigned(lengthBytes, b.sizeBytes() - offset) > 0)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(REG, Errno.EFAULT, "0x" + Long.toHexString(addr) + "+" + lengthBytes + " runs past the end"
                + " of " + b + " (the peer-memory client's get_pages)"
                + "; register a range inside the GPU buffer");
        }
        return registerGpu(SimPeerMr.Kind.PEER_MEMORY, b, null, offset, addr, lengthBytes, iova, rights, REG);
    }

    /**
     * ibv_reg_dmabuf_mr: the checks, then a dynamic attachment ({@link ProviderRule#DMABUF_DYNAMIC}: mapped now, its
     * translation zapped by the exporter's {@code move_notify}) or a pinned one ({@link ProviderRule#DMABUF_PINNED}).
     */
    MemoryRegion registerDmabuf(final long offset, final long lengthBytes, final long iova, final int fd,
        final Set<Access> access)
    {
        final String verb = "ibv_reg_dmabuf_mr";
        pd.checkOpen(verb);
        final SimDevice device = context.device();
        final SimDmabuf d;
        try
        {
            d = checkDmabuf(device, offset, lengthBytes, iova, fd, access, verb);
        }
        catch (final VerbsException e)
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw e;
        }
        final SimPeerMr.Kind kind = device.profile().follows(ProviderRule.DMABUF_DYNAMIC)
            ? SimPeerMr.Kind.DMABUF_DYNAMIC : SimPeerMr.Kind.DMABUF_PINNED;
        return registerGpu(kind, d.buffer(), d, offset, iova, lengthBytes, iova, access.isEmpty()
            ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access), verb);
    }

    /** The checks of ibv_reg_dmabuf_mr, in the library's and kernel's order; returns the dma-buf. */
    private static SimDmabuf checkDmabuf(final SimDevice device, final long offset, final long lengthBytes,
        final long iova, final int fd, final Set<Access> access, final String verb)
    {
        if (access == null || AccessRules.hasNull(access))
        {
            throw Errors.invalid(verb, "access must be a set of Access flags (empty for none), got " + access);
        }
        for (final Access a : access)
        {
            if (!DMABUF_ACCESS.contains(a))
            {
                throw Errors.invalid(verb, "access " + a + ": only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, "
                    + "REMOTE_ATOMIC and RELAXED_ORDERING are accepted (ibv_reg_mr(3))"
                    + "; drop the other flags");
            }
        }
        Access.checkDependencies(access, verb);
        AccessRules.checkDriverAccess(device.profile(), access, verb);
        if ((offset & 0xfff) != (iova & 0xfff))
        {
            throw Errors.invalid(verb, "offset=0x" + Long.toHexString(offset) + " and iova=0x"
                + Long.toHexString(iova) + " differ in their offset within a 4 KiB page (ibv_reg_mr(3))"
                + "; give an iova with the offset's page offset");
        }
        if (!device.profile().follows(ProviderRule.DMABUF_DYNAMIC)
            && !device.profile().follows(ProviderRule.DMABUF_PINNED))
        {
            // ib_uverbs' REG_DMABUF_MR handler answers EOPNOTSUPP for a driver without reg_user_mr_dmabuf, as
            // libibverbs does for a provider without reg_dmabuf_mr: a driver (or driver release) without dma-buf MRs.
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " (" + device.profile().driver()
                + ") cannot register dma-bufs: its driver has no reg_user_mr_dmabuf (this driver, or this release of "
                + "it, has no dma-buf MRs)"
                + "; use a driver (or a release of it) that registers dma-bufs (mlx5 does), or register the GPU "
                + "memory through a peer-memory client instead (nvidia-peermem: ibv_reg_mr of the GPU address; NCCL "
                + "does so with NCCL_DMABUF_ENABLE=0)");
        }
        final SimDmabuf d = device.host().dmabuf(fd);
        if (d == null)
        {
            throw Errors.of(verb, Errno.EBADF, "fd " + fd + " names no open dma-buf on host "
                + device.host().name() + " (dma_buf_get)"
                + "; pass the fd from the GPU's dma-buf export");
        }
        if (lengthBytes == 0 || offset < 0 || Long.compareUnsigned(offset + lengthBytes, offset) < 0
            || Long.compareUnsigned(offset + lengthBytes, d.sizeBytes()) > 0)
        {
            throw Errors.invalid(verb, "range offset=" + offset + " length=" + Long.toUnsignedString(
                lengthBytes) + " is empty, wraps or leaves the dma-buf of " + d.sizeBytes() + " bytes "
                + "(ib_umem_dmabuf_get)"
                + "; register a range inside the dma-buf");
        }
        return d;
    }

    /** The common part: BAR1 mapping, tables entry, translation. Nothing is left behind on failure. */
    private SimPeerMr registerGpu(final SimPeerMr.Kind kind, final GpuBuffer b, final SimDmabuf d, final long offset,
        final long addr, final long lengthBytes, final long iova, final Set<Access> rights, final String verb)
    {
        final SimDevice device = context.device();
        final long startNs = device.fabric().clock().nowNs();
        final int bits = Access.toBits(rights);
        final boolean zeroBased = rights.contains(Access.ZERO_BASED) && kind != SimPeerMr.Kind.DMABUF_DYNAMIC;
        // A ZERO_BASED MR is addressed by offsets: the tables know it by its first byte's offset in its page.
        final long tableIova = zeroBased ? addr & 0xfff : iova;
        // The footprint in BAR1 of whole 64 KiB GPU pages: computed from a provisional MR.
        final SimPeerMr probe = new SimPeerMr(pd, kind, b, d, offset, addr, lengthBytes, iova, 0, 0, rights, 0, 0);
        final long bar1 = probe.bar1Footprint();
        if (!b.gpu().mapBar1(bar1))
        {
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(verb, Errno.EFAULT, b.gpu().bar1Exhausted(bar1));
        }
        final int key;
        final long entries;
        try
        {
            if (kind == SimPeerMr.Kind.DMABUF_DYNAMIC)
            {
                final RegisteredMr r = device.tables().registerOnDemand(pdNum, lengthBytes, iova, bits, PAGE_SHIFT_4K);
                key = r.key();
                entries = r.mtt().entries();
            }
            else
            {
                // The pinned pages as whole 4 KiB pages of contiguous VRAM (ib_umem_get needs no alignment).
                final long first = probe.busAddr(0) & ~0xfffL;
                final long end = (probe.busAddr(0) + lengthBytes + 0xfff) & ~0xfffL;
                final RegisteredMr r = device.tables().register(pdNum, List.of(new DmaRun(first, end - first)),
                    probe.busAddr(0), lengthBytes, tableIova, bits & ~Access.ZERO_BASED.bit());
                key = r.key();
                entries = r.mtt().entries();
            }
        }
        catch (final TableException e)
        {
            b.gpu().unmapBar1(bar1);
            device.count(SimCounter.MR_REGISTRATION_FAILURES, 1);
            throw Errors.of(verb, e);
        }
        final int rkey = AccessRules.rkey(device.profile(), rights, key);
        if (zeroBased)
        {
            device.keys().zeroBased(key, tableIova);
        }
        final SimPeerMr mr = new SimPeerMr(pd, kind, b, d, offset, addr, lengthBytes, zeroBased ? 0 : iova, key,
            rkey, rights, entries, bar1);
        if (kind == SimPeerMr.Kind.DMABUF_DYNAMIC)
        {
            device.count(SimCounter.ODP_ENTRIES_MAPPED, mr.mapAll(device.tables()));
        }
        if (d != null)
        {
            d.attach(mr, kind == SimPeerMr.Kind.DMABUF_PINNED);
        }
        else
        {
            b.peerMrs().add(mr);
        }
        peerMrs.add(mr);
        device.keys().peerRegistered(mr);
        final long durationNs = device.fabric().costModel().odpRegistrationNs(0, entries);
        device.fabric().span(device, verb.equals(REG) ? "reg_mr" : "reg_dmabuf_mr", "registration", durationNs,
            Map.of("lkey", key, "gpu", b.gpu().name(), "kind", kind.name(), "length", lengthBytes,
                "mtt_entries", entries, "bar1_bytes", bar1));
        device.count(SimCounter.MR_REGISTRATIONS, 1);
        device.record(RegistrationEvent.reg(startNs, durationNs, key, addr, lengthBytes, iova, bits)
            .translation(GPU_MR_PAGE_BYTES, entries));
        return mr;
    }

    /** Deregisters an MR over GPU memory: the tables entry goes, then BAR1 and the attachment. */
    void deregister(final SimPeerMr mr)
    {
        final SimDevice device = context.device();
        final KeyZap zap = KeyZap.of(device, mr.lkey(), mr.rkey());
        mr.markClosed();
        peerMrs.remove(mr);
        device.keys().peerDeregistered(mr);
        final CostModel cost = device.fabric().costModel();
        device.fabric().span(device, "dereg_mr", "registration", cost.deregFixedNs(), Map.of("lkey",
            mr.lkey(), "gpu", mr.gpu().name(), "kind", mr.kind().name()));
        zap.reportInvalidation(device, mr.lkey());
        device.record(RegistrationEvent.dereg(zap.startNs(), cost.deregFixedNs() + cost.invalidationStallNs(),
            mr.lkey(), mr.addr(), mr.lengthBytes(), mr.iova(), Access.toBits(mr.access()))
            .translation(GPU_MR_PAGE_BYTES, mr.mttEntries()).dropped(zap.cacheEntriesDropped()));
    }

    /** @return the live MRs over GPU memory, in registration order. */
    List<SimPeerMr> live()
    {
        return List.copyOf(peerMrs);
    }

    /** @return how many MRs over GPU memory are live. */
    int count()
    {
        return peerMrs.size();
    }
}
