package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.LW;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.MIB;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.bare;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.cx5;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.rig;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.with;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.without;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.Rig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DriverProfiles;
import dev.rnicsim.simnic.DriverTraits;
import dev.rnicsim.simnic.GpuBuffer;
import dev.rnicsim.simnic.GpuTopology;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimGpu;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.WrOpcode;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The errno paths of memory windows and fast registration, and of process memory, device memory, GPU memory, the
 * default methods of a backend without a feature and the registration cache, reached through the Java API as
 * {@link ErrnoWalkVerbs} reaches those of devices, registration and queues. Stateless.
 */
final class ErrnoWalkWindowsMemory
{
    private ErrnoWalkWindowsMemory()
    {
    }

    /** @return every case. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.addAll(windowsAndFastRegistration());
        c.addAll(memoryGpuAndBackends());
        return c;
    }

    private static SimGpu gpu(final Rig r)
    {
        return r.device().host().addGpu("gpu0", 64 * MIB, 64 * MIB, GpuTopology.PIX);
    }

    /** @return {@code traits} with the record component {@code name} set to {@code value}. */
    private static DriverTraits traitsWith(final DriverTraits traits, final String name, final Object value)
        throws ReflectiveOperationException
    {
        final RecordComponent[] rc = DriverTraits.class.getRecordComponents();
        final Object[] args = new Object[rc.length];
        final Class<?>[] types = new Class<?>[rc.length];
        for (int i = 0; i < rc.length; i++)
        {
            types[i] = rc[i].getType();
            args[i] = rc[i].getName().equals(name) ? value : rc[i].getAccessor().invoke(traits);
        }
        return DriverTraits.class.getDeclaredConstructor(types).newInstance(args);
    }

    private static List<ErrnoWalkApi.Case> windowsAndFastRegistration()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a window of a null type", "EINVAL", () -> cx5().pd().allocMw((MwType)null),
            "type must be TYPE_1 or TYPE_2"));
        c.add(c("a window of type code 3", "EINVAL", () -> cx5().pd().allocMw(3), "type 1 or"));
        c.add(c("a window on a device without windows", "EOPNOTSUPP", () -> rig(without(DeviceProfiles.connectx5(),
            DeviceCap.MEM_WINDOW)).pd().allocMw(MwType.TYPE_1), "has no memory windows"));
        c.add(c("a type 2 window on a device without them", "EOPNOTSUPP", () -> rig(without(
            DeviceProfiles.connectx5(), DeviceCap.MEM_WINDOW_TYPE_2A, DeviceCap.MEM_WINDOW_TYPE_2B)).pd()
            .allocMw(MwType.TYPE_2), "has no type 2 windows"));
        c.add(c("a window past max_mw", "ENOMEM", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.maxMw(1)));
            r.pd().allocMw(MwType.TYPE_1);
            r.pd().allocMw(MwType.TYPE_1);
        }, "max_mw=1", "deallocate a window"));
        c.add(c("a fast-registration MR on a device without MEM_MGT_EXTENSIONS", "EOPNOTSUPP",
            () -> rig(without(DeviceProfiles.connectx5(), DeviceCap.MEM_MGT_EXTENSIONS)).pd().allocMr(4),
            "lacks MEM_MGT_EXTENSIONS"));
        c.add(c("a map of a deregistered fast-registration MR", "EINVAL", () -> {
            final Rig r = cx5();
            final FastRegMr f = r.pd().allocMr(4);
            f.close();
            f.mapSg(r.buf(), 4096);
        }, "the MR is deregistered"));
        c.add(c("a map of zero bytes", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().allocMr(4).mapSg(r.buf(), 0);
        }, "must be positive and not wrap"));
        c.add(c("a posted BIND_MW without its window", "EINVAL", () -> {
            final Rig r = cx5();
            r.connected(EnumSet.noneOf(Access.class)).postSend(new SendWr(1, WrOpcode.BIND_MW, List.of(),
                EnumSet.noneOf(SendFlag.class), 0, 0, 0, 0, 0, 0));
        }, "BIND_MW needs SendWr.bindMw"));
        c.add(c("a posted BIND_MW of a type 1 window", "EINVAL", () -> {
            final Rig r = cx5();
            final MemoryWindow w = r.pd().allocMw(MwType.TYPE_1);
            r.connected(EnumSet.noneOf(Access.class)).postSend(SendWr.bindMw(1, w, w.rkey(), MwBindInfo.unbind()));
        }, "type 1 windows are bound with"));
        c.add(c("a type 2 bind to a zero-based MR on mlx5", "EINVAL", () -> {
            final Rig r = cx5();
            final MemoryRegion m = r.mr(EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND, Access.ZERO_BASED));
            final MemoryWindow w = r.pd().allocMw(MwType.TYPE_2);
            r.connected(EnumSet.noneOf(Access.class)).postSend(SendWr.bindMw(1, w, SendWr.incRkey(w.rkey()),
                new MwBindInfo(m, 0, 4096, EnumSet.of(Access.REMOTE_READ))));
        }, "zero-based"));
        c.add(c("a type 2 window over 2 GiB on mlx5", "EOPNOTSUPP", () -> {
            final Rig r = cx5();
            final MemoryRegion m = r.mr(EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND));
            final MemoryWindow w = r.pd().allocMw(MwType.TYPE_2);
            r.connected(EnumSet.noneOf(Access.class)).postSend(SendWr.bindMw(1, w, SendWr.incRkey(w.rkey()),
                new MwBindInfo(m, r.buf(), 3L << 30, EnumSet.of(Access.REMOTE_READ))));
        }, "2 GiB"));
        c.add(c("a posted REG_MR without its MR", "EINVAL", () -> cx5().connected(EnumSet.noneOf(Access.class))
            .postSend(new SendWr(1, WrOpcode.REG_MR, List.of(), EnumSet.noneOf(SendFlag.class), 0, 0, 0, 0, 0, 0)),
            "REG_MR needs SendWr.regMr"));
        c.add(c("a LOCAL_INV on a device without MEM_MGT_EXTENSIONS", "EOPNOTSUPP",
            () -> rig(without(DeviceProfiles.connectx5(), DeviceCap.MEM_MGT_EXTENSIONS))
                .connected(EnumSet.noneOf(Access.class))
                .postSend(SendWr.localInv(1, 0x1234)), "lacks MEM_MGT_EXTENSIONS"));
        c.add(c("ibv_bind_mw of something that is no window", "EINVAL", () -> cx5().qp().bindMw(null, 1,
            EnumSet.noneOf(SendFlag.class), MwBindInfo.unbind()), "mw is not a live window"));
        c.add(c("ibv_bind_mw of a type 2 window", "EINVAL", () -> {
            final Rig r = cx5();
            r.qp().bindMw(r.pd().allocMw(MwType.TYPE_2), 1, EnumSet.noneOf(SendFlag.class), MwBindInfo.unbind());
        }, "binds type 1 windows"));
        c.add(c("ibv_bind_mw without its bind info", "EINVAL", () -> {
            final Rig r = cx5();
            r.qp().bindMw(r.pd().allocMw(MwType.TYPE_1), 1, EnumSet.noneOf(SendFlag.class), null);
        }, "mw_bind and its send flags"));
        c.add(c("ibv_bind_mw through a QP of another device", "EINVAL", () -> {
            final Rig r = cx5();
            cx5().qp().bindMw(r.pd().allocMw(MwType.TYPE_1), 1, EnumSet.noneOf(SendFlag.class),
                MwBindInfo.unbind());
        }, "the window belongs to"));
        c.add(c("ibv_bind_mw with a range but no MR", "EINVAL", () -> {
            final Rig r = cx5();
            r.qp().bindMw(r.pd().allocMw(MwType.TYPE_1), 1, EnumSet.noneOf(SendFlag.class),
                new MwBindInfo(null, r.buf(), 4096, EnumSet.of(Access.REMOTE_READ)));
        }, "no MR but addr="));
        c.add(c("ibv_bind_mw to a null MR on mlx5", "EOPNOTSUPP", () -> {
            final Rig r = cx5();
            r.qp().bindMw(r.pd().allocMw(MwType.TYPE_1), 1, EnumSet.noneOf(SendFlag.class),
                new MwBindInfo(r.pd().allocNullMr(), 0, 4096, EnumSet.of(Access.REMOTE_READ)));
        }, "not a plain MR"));
        return c;
    }

    private static List<ErrnoWalkApi.Case> memoryGpuAndBackends()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("an mmap without a backing", "EINVAL", () -> cx5().ctx().memory().allocate(4096, null),
            "backing is null"));
        c.add(c("a write of null bytes", "EFAULT", () -> {
            final Rig r = cx5();
            r.ctx().memory().write(r.buf(), null);
        }, "data is null"));
        // device memory
        c.add(c("a copy of null bytes to device memory", "EFAULT", () -> cx5().ctx().allocDm(4096).memcpyTo(0, null),
            "src is null"));
        c.add(c("a free of device memory an MR uses", "EBUSY", () -> {
            final Rig r = cx5();
            final DeviceMemory dm = r.ctx().allocDm(4096);
            r.pd().regDmMr(dm, 0, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED));
            dm.close();
        }, "MR(s) of ibv_reg_dm_mr", "deregister them first"));
        c.add(c("a device-memory MR on a device without it", "EOPNOTSUPP", () -> {
            final Rig r = rig(DeviceProfiles.rxe());
            r.pd().regDmMr(cx5().ctx().allocDm(4096), 0, 4096, EnumSet.of(Access.ZERO_BASED));
        }, "max_dm_size 0"));
        c.add(c("a device-memory MR over another device's memory", "EINVAL",
            () -> cx5().pd().regDmMr(cx5().ctx().allocDm(4096), 0, 4096, EnumSet.of(Access.ZERO_BASED)),
            "not live device memory of this device"));
        c.add(c("a device-memory MR with a null access set", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().regDmMr(r.ctx().allocDm(4096), 0, 4096, null);
        }, "access must be a set"));
        // GPU memory
        c.add(c("cudaMalloc of zero bytes", "EINVAL", () -> gpu(cx5()).allocate(0), "must be positive"));
        c.add(c("a GPU buffer freed twice", "EINVAL", () -> {
            final SimGpu g = gpu(cx5());
            final GpuBuffer b = g.allocate(MIB);
            g.free(b);
            g.free(b);
        }, "not a live buffer"));
        c.add(c("a dma-buf fd closed twice", "EBADF", () -> {
            final SimGpu g = gpu(cx5());
            final int fd = g.exportDmabuf(g.allocate(MIB), 0, MIB);
            g.closeDmabuf(fd);
            g.closeDmabuf(fd);
        }, "no open dma-buf"));
        c.add(c("a GPU buffer moved while a pinning importer holds its dma-buf", "EBUSY", () -> {
            final Rig r = rig(DeviceProfiles.byName("efa"));
            final SimGpu g = gpu(r);
            final GpuBuffer b = g.allocate(MIB);
            final int fd = g.exportDmabuf(b, 0, MIB);
            r.pd().regDmabufMr(0, MIB, 0, fd, LW);
            g.move(b);
        }, "is pinned by"));
        c.add(c("a GPU buffer moved after it was freed", "EINVAL", () -> {
            final SimGpu g = gpu(cx5());
            final GpuBuffer b = g.allocate(MIB);
            g.free(b);
            g.move(b);
        }, "not a live buffer"));
        c.add(c("cudaMalloc with VRAM free but no range large enough", "ENOMEM", () -> {
            final SimGpu g = gpu(cx5());
            final GpuBuffer first = g.allocate(16 * MIB);
            g.allocate(16 * MIB);
            g.free(first);
            g.allocate(40 * MIB);
        }, "no free VRAM range"));
        c.add(c("a GPU buffer moved with no VRAM left", "ENOMEM", () -> {
            final SimGpu g = gpu(cx5());
            final GpuBuffer b = g.allocate(40 * MIB);
            g.move(b);
        }, "to move"));
        c.add(c("a cudaMemcpy to an unmapped host range", "EFAULT", () -> {
            final Rig r = cx5();
            final SimGpu g = gpu(r);
            g.copyToHost(g.allocate(MIB).gpuVa(), r.device().contexts().get(0).process(), 0x10_0000L, 64);
        }, "host range 0x100000"));
        c.add(c("a cudaMemcpy outside a GPU buffer", "EFAULT", () -> gpu(cx5()).read(0x1234, 8),
            "not inside a live buffer"));
        c.add(c("a peer-memory MR past the end of its GPU buffer", "EFAULT", () -> {
            final Rig r = cx5();
            r.device().host().peerMemoryClient(true);
            final GpuBuffer b = gpu(r).allocate(MIB);
            r.pd().regMr(b.gpuVa(), 2 * MIB, LW);
        }, "runs past the end"));
        c.add(c("cudaMalloc after the unified GPU address range is used up", "ENOMEM", () -> {
            final SimGpu g = cx5().device().host().addGpu("big", 1L << 40, 64 * MIB, GpuTopology.PIX);
            for (int i = 0; i < 64; i++)
            {
                g.free(g.allocate(1L << 40));
            }
        }, "used up"));
        c.add(c("a CQ ring whose MADV_DONTFORK splits past vm.max_map_count", "EAGAIN", () -> {
            final SimHost host = new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(256 * MIB)
                .maxMapCount(1).forkBehaviour(dev.rnicsim.pagetable.ForkBehaviour.LEGACY).build());
            final SimDevice d = host.addDevice("sim:h/mlx5_0", DeviceProfiles.connectx5());
            final dev.rnicsim.pagetable.UserProcess p = host.host().spawn("app").setenv("RDMAV_FORK_SAFE", "1");
            final Context ctx = d.open(p);
            p.mmapAnonymous(64 * 1024);
            ctx.createCq(16);
        }, "fork support (ibv_fork_init)", "raise vm.max_map_count"));
        // driver traits: hns's errno for any pin failure, a per-MR translation limit
        c.add(c("a failed pin on hns", "ENOMEM", () -> rig(DriverProfiles.hns()).pd().regMr(0x10_0000L, 4096, LW),
            "ib_umem_get failed with EFAULT", "returns ENOMEM"));
        c.add(c("an MR past the driver's translation entries (EFA's max_mr_pages)", "ENOMEM", () -> {
            final DeviceProfile efa = DriverProfiles.efa();
            final Rig r = rig(with(efa.withTraits(traitsWith(efa.traits(), "maxTranslationEntries", 4L)),
                b -> b.pageSizeCap(4096)));
            r.pd().regMr(r.buf(), 64 * 1024, LW);
        }, "translation entries", "max_mr_pages", "register it in smaller MRs"));
        c.add(c("a rereg of a dma-buf MR", "EOPNOTSUPP", () -> {
            final Rig r = cx5();
            final SimGpu g = gpu(r);
            final int fd = g.exportDmabuf(g.allocate(MIB), 0, MIB);
            r.pd().regDmabufMr(0, MIB, 0, fd, LW).rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, LW);
        }, "is not simulated", "deregister and register again"));
        // backends without a feature: the defaults of the verbs-api interfaces
        c.add(c("device memory of a backend without it", "EOPNOTSUPP", () -> bare(Context.class).allocDm(4096),
            "does not provide device"));
        c.add(c("a port query of a backend without it", "EOPNOTSUPP", () -> bare(Context.class).queryPort(1),
            "does not provide it"));
        c.add(c("a GID query of a backend without it", "EOPNOTSUPP", () -> bare(Context.class).queryGid(1, 0),
            "does not provide it"));
        c.add(c("a typed GID query of a backend without it", "EOPNOTSUPP",
            () -> bare(Context.class).queryGidEntry(1, 0), "does not provide it"));
        c.add(c("a null MR of a backend without it", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).allocNullMr(), "null MRs"));
        c.add(c("a device-memory MR of a backend without it", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).regDmMr(null, 0, 4096, LW), "does not provide device"));
        c.add(c("an SRQ of a backend without SRQs", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).createSrq(new SrqAttr(4, 1, 0)), "has no SRQs"));
        c.add(c("an SRQ resize of a backend without it", "EOPNOTSUPP",
            () -> bare(SharedReceiveQueue.class).resize(8), "does not resize SRQs"));
        c.add(c("an SRQ resize on a device without IBV_DEVICE_SRQ_RESIZE", "EINVAL",
            () -> cx5().pd().createSrq(new SrqAttr(4, 1, 0)).resize(8), "cannot resize an SRQ", "nothing changed"));
        c.add(c("an SRQ resize to 0 on rxe", "EINVAL",
            () -> rig(DeviceProfiles.rxe()).pd().createSrq(new SrqAttr(4, 1, 0)).resize(0),
            "must be 1..max_srq_wr=1048576", "nothing changed"));
        c.add(c("an address handle of a backend without them", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).createAh(null), "address handles"));
        c.add(c("a dma-buf MR of a backend without it", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).regDmabufMr(0, 4096, 0, 3, LW), "cannot register"));
        c.add(c("advice of a backend without advise_mr", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).adviseMr(MrAdvice.PREFETCH, 0, List.of()), "has no advise_mr"));
        c.add(c("ibv_modify_qp of a backend without it", "EOPNOTSUPP",
            () -> bare(QueuePair.class).modify(null, Set.of()), "has no ibv_modify_qp"));
        c.add(c("ibv_query_qp of a backend without it", "EOPNOTSUPP", () -> bare(QueuePair.class).query(),
            "cannot query a QP"));
        c.add(c("a UD post of a backend without UD", "EOPNOTSUPP", () -> bare(QueuePair.class).postSendUd(List.of()),
            "has no UD QPs"));
        // the registration cache (verbs-api strategy)
        c.add(c("a registration-cache range of zero bytes", "EINVAL", () -> {
            final Rig r = cx5();
            RegistrationCache.create(r.pd(), RegistrationCache.Config.unbounded()).acquire(r.buf(), 0, LW);
        }, "is empty or wraps"));
        c.add(c("a registration-cache miss past RLIMIT_MEMLOCK", "ENOMEM", () -> {
            final Rig r = cx5();
            final RegistrationCache k = RegistrationCache.create(r.pd(), RegistrationCache.Config.unbounded());
            k.release(k.acquire(r.buf(), 512 * 1024, LW));
            final long big = r.ctx().memory().allocate(16 * MIB, Backing.BASE_PAGES);
            k.acquire(big, 16 * MIB, LW);
        }, "idle MRs"));
        return c;
    }
}
