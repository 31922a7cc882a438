package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;

import dev.rnicsim.pagetable.HostConfig;
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
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.FastRegMr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MrInitAttr;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.Verbs;
import dev.rnicsim.verbs.WrOpcode;
import dev.rnicsim.verbs.strategy.RegistrationCache;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The verbs' errno paths (modules sim-nic and verbs-api) that no script verb reaches, reached through the Java
 * API as a program calls it: null arguments, closed objects, device limits set low, provider rules of a profile,
 * and the default methods of a backend without a feature. Stateless.
 */
final class ErrnoWalkVerbs
{
    private static final long MIB = 1L << 20;
    private static final EnumSet<Access> LW = EnumSet.of(Access.LOCAL_WRITE);

    private ErrnoWalkVerbs()
    {
    }

    /**
     * One process with an open device, a PD, a CQ and 1 MiB of touched memory.
     *
     * @param device the device.
     * @param ctx    its context.
     * @param pd     a PD.
     * @param cq     a CQ.
     * @param buf    the memory's first byte.
     */
    record Rig(SimDevice device, Context ctx, ProtectionDomain pd, CompletionQueue cq, long buf)
    {
        MemoryRegion mr(final Set<Access> access)
        {
            return pd.regMr(buf, 64 * 1024, access);
        }

        QueuePair qp()
        {
            return pd.createQp(QpInitAttr.rc(cq));
        }

        /** @return an RC QP in RTS, connected to a QP of a second context of the same device. */
        QueuePair connected(final Set<Access> qpAccess)
        {
            final Context other = device.open();
            final ProtectionDomain pd2 = other.allocPd();
            final QueuePair peer = pd2.createQp(QpInitAttr.rc(other.createCq(16)));
            final QueuePair q = qp();
            q.connect(peer.address(), qpAccess);
            peer.connect(q.address(), EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
            return q;
        }
    }

    static Rig rig(final DeviceProfile profile)
    {
        return rig(profile, new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(256 * MIB)
            .build()));
    }

    private static Rig rig(final DeviceProfile profile, final SimHost host)
    {
        final SimDevice d = host.addDevice("sim:h/" + profile.name(), profile);
        final Context ctx = d.open();
        final long buf = ctx.memory().allocate(MIB, Backing.BASE_PAGES);
        ctx.memory().write(buf, new byte[(int)MIB]);
        return new Rig(d, ctx, ctx.allocPd(), ctx.createCq(64), buf);
    }

    static Rig cx5()
    {
        return rig(DeviceProfiles.connectx5());
    }

    static DeviceProfile with(final DeviceProfile p, final UnaryOperator<DeviceAttributes.Builder> change)
    {
        return p.withAttributes(change.apply(p.attributes().toBuilder()).build());
    }

    private static DeviceProfile without(final DeviceProfile p, final DeviceCap... caps)
    {
        long flags = p.attributes().deviceCapFlags();
        for (final DeviceCap cap : caps)
        {
            flags &= ~cap.bit();
        }
        final long f = flags;
        return with(p, b -> b.deviceCapFlags(f));
    }

    /** @return an object of an interface whose abstract methods fail and whose default methods run. */
    @SuppressWarnings("unchecked")
    static <T> T bare(final Class<T> type)
    {
        final InvocationHandler h = (proxy, method, args) -> {
            if (method.isDefault())
            {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            throw new UnsupportedOperationException(method.getName());
        };
        return (T)Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h);
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

    /** @return every case. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.addAll(devicesAndPds());
        c.addAll(registration());
        c.addAll(queues());
        c.addAll(windowsAndFastRegistration());
        c.addAll(memoryGpuAndBackends());
        return c;
    }

    private static List<ErrnoWalkApi.Case> devicesAndPds()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a device name no backend has", "ENODEV", () -> Verbs.device("sim:nope"), "no device named",
            "use one of those names"));
        c.add(c("a device opened for a process of another host", "EINVAL", () -> {
            final SimFabric f = new SimFabric();
            final SimDevice d = f.addHost("a").addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
            d.open(f.addHost("b").host().spawn("app"));
        }, "must be a live process of host"));
        c.add(c("a PD past max_pd", "ENOMEM", () -> rig(with(DeviceProfiles.connectx5(), b -> b.maxPd(1)))
            .ctx().allocPd(), "max_pd=1", "deallocate a PD first"));
        c.add(c("a CQ past max_cq", "ENOMEM", () -> rig(with(DeviceProfiles.connectx5(), b -> b.maxCq(1)))
            .ctx().createCq(4), "max_cq=1", "destroy a CQ first"));
        c.add(c("a PD of a closed context", "EINVAL", () -> {
            final Rig r = cx5();
            r.ctx().close();
            r.ctx().allocPd();
        }, "the context is closed", "open the device again"));
        c.add(c("a poll of a destroyed CQ", "EINVAL", () -> {
            final Rig r = cx5();
            r.cq().close();
            r.cq().poll(1);
        }, "the CQ is closed", "poll a live CQ"));
        c.add(c("a destroy of a CQ a QP uses", "EBUSY", () -> {
            final Rig r = cx5();
            r.qp();
            r.cq().close();
        }, "still use this CQ", "destroy them first"));
        c.add(c("a registration through a deallocated PD", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().dealloc();
            r.mr(LW);
        }, "the PD is closed", "allocate a new PD"));
        c.add(c("an address handle without its attribute", "EINVAL", () -> cx5().pd().createAh(null),
            "ah_attr is null"));
        return c;
    }

    private static List<ErrnoWalkApi.Case> registration()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a registration with a null access set", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().regMr(r.buf(), 4096, null);
        }, "access must be a set of Access flags"));
        c.add(c("access bits no flag has", "EINVAL", () -> Access.fromBits(1 << 30), "no ibv_access_flags"));
        c.add(c("a registration of zero bytes with an iova", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().regMr(r.buf(), 0, r.buf(), LW);
        }, "lengthBytes=0", "at least one byte"));
        c.add(c("a registration past max_mr_size", "EINVAL", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.maxMrSizeBytes(8192)));
            r.pd().regMr(r.buf(), 64 * 1024, LW);
        }, "max_mr_size=8192"));
        c.add(c("a registration that wraps past 2^64", "EINVAL", () -> cx5().pd().regMr(-4096, 8192, LW),
            "wraps past 2^64"));
        c.add(c("a registration whose iova differs in its page offset", "EINVAL", () -> {
            final Rig r = rig(DeviceProfiles.e810());
            r.pd().regMr(r.buf(), 4096, 0x10_0008L, LW);
        }, "differ in their offset"));
        c.add(c("FLUSH_GLOBAL on a device without the capability", "EOPNOTSUPP", () -> {
            final Rig r = rig(without(DeviceProfiles.rxe(), DeviceCap.FLUSH_GLOBAL));
            r.mr(EnumSet.of(Access.LOCAL_WRITE, Access.FLUSH_GLOBAL));
        }, "FLUSH_GLOBAL", "drop the flag"));
        c.add(c("FLUSH access on a kernel that predates it", "EINVAL",
            () -> rig(DeviceProfiles.rxeLegacy()).mr(EnumSet.of(Access.LOCAL_WRITE, Access.FLUSH_GLOBAL)),
            "predates IBV_ACCESS_FLUSH"));
        c.add(c("ZERO_BASED on rxe", "EOPNOTSUPP",
            () -> rig(DeviceProfiles.rxe()).mr(EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED)),
            "neither ZERO_BASED nor HUGETLB"));
        c.add(c("FLUSH_PERSISTENT on rxe without persistent memory", "EINVAL",
            () -> rig(DeviceProfiles.rxe()).mr(EnumSet.of(Access.LOCAL_WRITE, Access.FLUSH_PERSISTENT)),
            "persistent memory"));
        c.add(c("an access flag the driver does not take", "EOPNOTSUPP",
            () -> rig(DeviceProfiles.byName("efa")).mr(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC)),
            "accepts only", "drop the flag"));
        c.add(c("an implicit ODP MR with an iova", "EINVAL", () -> cx5().pd().regMr(0, -1L, 0x1000,
            EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND)), "needs iova 0"));
        c.add(c("an implicit ODP MR on a device without implicit ODP", "EINVAL",
            () -> rig(DeviceProfiles.rxe()).pd().regMr(0, -1L, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND)),
            "IBV_ODP_SUPPORT_IMPLICIT"));
        c.add(c("an implicit ODP MR with HUGETLB", "EINVAL", () -> cx5().pd().regMr(0, -1L,
            EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND, Access.HUGETLB)), "HUGETLB is only"));
        c.add(c("an ODP MR past user space", "EFAULT", () -> cx5().pd().regMr(0x7fff_ffff_0000L, 1L << 20,
            EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND)), "leaves the user address space"));
        c.add(c("an ODP MR of zero bytes", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().regMr(r.buf(), 0, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        }, "lengthBytes=0"));
        c.add(c("an ODP MR past max_mr_size", "EINVAL", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.maxMrSizeBytes(8192)));
            r.pd().regMr(r.buf(), 64 * 1024, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        }, "max_mr_size=8192"));
        c.add(c("an ODP MR that wraps past 2^64", "EOVERFLOW", () -> cx5().pd().regMr(-4096, 8192,
            EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND)), "wraps past 2^64"));
        c.add(c("an ODP MR whose iova differs in its page offset", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().regMr(r.buf(), 4096, 0x10_0008L, EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
        }, "differ in their offset"));
        c.add(c("advice on a device without ODP", "EOPNOTSUPP", () -> {
            final Rig r = rig(DeviceProfiles.connectx3());
            final MemoryRegion m = r.mr(LW);
            r.pd().adviseMr(MrAdvice.PREFETCH, 0, List.of(Sge.of(m, 0, 4096)));
        }, "has no advise_mr"));
        c.add(c("advice without an sg_list", "EINVAL", () -> cx5().pd().adviseMr(MrAdvice.PREFETCH, 0, List.of()),
            "non-empty sg_list"));
        c.add(c("advice with unknown flags", "EINVAL", () -> {
            final Rig r = cx5();
            final MemoryRegion m = r.mr(EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND));
            r.pd().adviseMr(MrAdvice.PREFETCH, 4, List.of(Sge.of(m, 0, 4096)));
        }, "IBV_ADVISE_MR_FLAG_FLUSH"));
        c.add(c("advice with a null SGE", "EINVAL", () -> cx5().pd().adviseMr(MrAdvice.PREFETCH, 0,
            Arrays.asList((Sge)null)), "sg_list[0] is null"));
        c.add(c("advice through a window's key", "EINVAL", () -> {
            final Rig r = cx5();
            final MemoryWindow w = r.pd().allocMw(MwType.TYPE_2);
            r.pd().adviseMr(MrAdvice.PREFETCH, 0, List.of(new Sge(r.buf(), 4096, w.rkey())));
        }, "names a memory window"));
        c.add(c("an extended registration without its attribute", "EINVAL", () -> cx5().pd().regMrEx(null),
            "mr_init_attr is null"));
        c.add(c("an extended registration in both modes", "EINVAL", () -> cx5().pd().regMrEx(new MrInitAttr(
            MrInitAttr.MASK_ADDR | MrInitAttr.MASK_FD, 0x1000, 4096, 0, 3, 0, LW)), "give exactly one"));
        c.add(c("an extended registration with FD_OFFSET alone", "EINVAL", () -> cx5().pd().regMrEx(
            new MrInitAttr(MrInitAttr.MASK_FD_OFFSET, 0, 4096, 0, 3, 0, LW)), "FD_OFFSET without FD"));
        c.add(c("an extended registration with a DMA handle", "EOPNOTSUPP", () -> cx5().pd().regMrEx(
            new MrInitAttr(MrInitAttr.MASK_ADDR | MrInitAttr.MASK_DMAH, 0x1000, 4096, 0, 0, 0, LW)), "DMAH"));
        c.add(c("an extended registration without access", "EINVAL", () -> cx5().pd().regMrEx(
            new MrInitAttr(MrInitAttr.MASK_ADDR, 0x1000, 4096, 0, 0, 0, null)), "access must be a set"));
        // rereg (ibv_rereg_mr)
        c.add(c("a rereg of a deregistered MR", "EINVAL", () -> {
            final MemoryRegion m = cx5().mr(LW);
            m.close();
            m.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, LW);
        }, "the MR is deregistered"));
        c.add(c("a rereg with a null flag set", "EINVAL", () -> cx5().mr(LW).rereg(null, null, 0, 0, LW),
            "flags must be a set of ReregFlag"));
        c.add(c("a rereg of the translation without a range", "EINVAL", () -> cx5().mr(LW).rereg(
            EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, 0, 0, null), "CHANGE_TRANSLATION with addr=0x0"));
        c.add(c("a rereg with access but no CHANGE_ACCESS", "EINVAL", () -> cx5().mr(LW).rereg(
            EnumSet.of(ReregFlag.CHANGE_PD), cx5().pd(), 0, 0, EnumSet.of(Access.REMOTE_READ)),
            "without CHANGE_ACCESS"));
        c.add(c("a rereg of access to null", "EINVAL", () -> cx5().mr(LW).rereg(
            EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, null), "CHANGE_ACCESS: access must be a set"));
        c.add(c("a rereg of the translation past max_mr_size", "EINVAL", () -> {
            final Rig r = cx5();
            r.mr(LW).rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, r.buf(), -4096L, null);
        }, "wraps or exceeds max_mr_size="));
        c.add(c("a rereg to write access of a read-only pin", "EPERM", () -> {
            final Rig r = rig(DeviceProfiles.connectx3());
            r.pd().regMr(r.buf(), 64 * 1024, EnumSet.noneOf(Access.class)).rereg(
                EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, LW);
        }, "needs a writable pin"));
        c.add(c("a rereg of the translation in rxe's kernel driver", "EOPNOTSUPP", () -> {
            // rxe's kernel (rxe_rereg_user_mr) behind a provider that passes ibv_rereg_mr on.
            final java.util.Set<dev.rnicsim.simnic.ProviderRule> rules = EnumSet.copyOf(
                DeviceProfiles.rxe().providerRules());
            rules.remove(dev.rnicsim.simnic.ProviderRule.REREG_MR_UNSUPPORTED);
            final Rig r = rig(DeviceProfiles.rxe().withProviderRules(rules));
            r.mr(LW).rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, r.buf(), 4096, null);
        }, "implements only CHANGE_PD"));
        c.add(c("a rereg of a null MR", "EINVAL", () -> cx5().pd().allocNullMr().rereg(
            EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, LW), "null MR"));
        c.add(c("a rereg of a fast-registration MR", "EINVAL", () -> cx5().pd().allocMr(4).rereg(
            EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, LW), "not a plain user MR"));
        c.add(c("a rereg of a device-memory MR", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().regDmMr(r.ctx().allocDm(4096), 0, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.ZERO_BASED))
                .rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, LW);
        }, "device memory cannot be"));
        // dma-buf registration
        c.add(c("a dma-buf MR with a null access set", "EINVAL", () -> cx5().pd().regDmabufMr(0, 4096, 0, 3, null),
            "access must be a set"));
        c.add(c("a dma-buf MR with an access the kernel refuses for it", "EINVAL", () -> cx5().pd()
            .regDmabufMr(0, 4096, 0, 3, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND)), "only LOCAL_WRITE"));
        c.add(c("a dma-buf MR whose iova differs in its page offset", "EINVAL", () -> cx5().pd()
            .regDmabufMr(0, 4096, 8, 3, LW), "offset=0x0 and iova=0x8"));
        return c;
    }

    private static List<ErrnoWalkApi.Case> queues()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a QP without its init attr", "EINVAL", () -> cx5().pd().createQp(null), "attr is null"));
        c.add(c("a UC QP on a device whose driver refuses it", "EOPNOTSUPP", () -> {
            final Rig r = rig(DeviceProfiles.byName("efa"));
            r.pd().createQp(QpInitAttr.rc(r.cq()).withType(QpType.UC));
        }, "create_qp accepts"));
        c.add(c("a QP with a CQ of another context", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().createQp(QpInitAttr.rc(cx5().cq()));
        }, "open CQs of the PD's context"));
        c.add(c("a QP with too much inline data", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().createQp(new QpInitAttr(r.cq(), r.cq(), QpType.RC, new QpCap(16, 16, 1, 1, 1 << 20), false));
        }, "max_inline_data=1048576 > 1024 bytes", "Ask for at most 1024 inline bytes"));
        c.add(c("a QP with a negative inline size", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().createQp(new QpInitAttr(r.cq(), r.cq(), QpType.RC, new QpCap(16, 16, 1, 1, -1), false));
        }, "max_inline_data=-1 is negative", "ask for 0 to 1024 inline bytes"));
        c.add(c("a QP past max_qp", "ENOMEM", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.maxQp(1)));
            r.qp();
            r.qp();
        }, "max_qp=1", "destroy a QP first"));
        c.add(c("a QP with an SRQ of another context", "EINVAL", () -> {
            final Rig r = cx5();
            r.pd().createQp(QpInitAttr.rc(r.cq()).withSrq(cx5().pd().createSrq(new SrqAttr(4, 1, 0))));
        }, "not a live SRQ of this context"));
        c.add(c("a modify to INIT with null access flags", "EINVAL", () -> cx5().qp().modifyToInit(null),
            "qp_access_flags is null"));
        c.add(c("a modify to RTR without the peer's address", "EINVAL", () -> {
            final QueuePair q = cx5().qp();
            q.modifyToInit(EnumSet.noneOf(Access.class));
            q.modifyToRtr(null, 12);
        }, "the remote QP's address is null"));
        c.add(c("a modify without attr", "EINVAL", () -> cx5().qp().modify(null, null), "attr and attr_mask"));
        c.add(c("a modify with a null state", "EINVAL", () -> {
            final QpAttr.Builder b = QpAttr.builder().state(null);
            cx5().qp().modify(b.build(), b.mask());
        }, "qp_state or cur_qp_state is null"));
        c.add(c("a modify of a destroyed QP", "EINVAL", () -> {
            final QueuePair q = cx5().qp();
            q.close();
            q.modifyToError();
        }, "is destroyed", "create a new QP"));
        c.add(c("a post of a null list", "EINVAL", () -> cx5().qp().postSend((List<SendWr>)null),
            "work-request list is null"));
        c.add(c("a post of a null work request", "EINVAL", () -> cx5().qp().postSend(Arrays.asList((SendWr)null)),
            "the work request is null"));
        c.add(c("a post to a destroyed QP", "EINVAL", () -> {
            final Rig r = cx5();
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            final MemoryRegion m = r.mr(LW);
            q.close();
            q.postSend(SendWr.send(1, List.of(Sge.of(m, 0, 8))));
        }, "the QP is destroyed"));
        c.add(c("a READ with more SGEs than max_sge_rd", "EINVAL", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.maxSgeRd(1)));
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            final MemoryRegion m = r.mr(LW);
            q.postSend(SendWr.read(1, List.of(Sge.of(m, 0, 8), Sge.of(m, 8, 8)), r.buf(), m.rkey()));
        }, "max_sge_rd=1"));
        c.add(c("an atomic on an mlx5 QP of a device whose atomic_cap is not ATOMIC_HCA", "EOPNOTSUPP", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.atomicCap(AtomicCap.GLOB)));
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            final MemoryRegion m = r.mr(LW);
            q.postSend(SendWr.fetchAndAdd(1, Sge.of(m, 0, 8), r.buf(), m.rkey(), 1));
        }, "created without atomics", "ATOMIC_HCA"));
        c.add(c("an atomic at a misaligned address on rxe", "EINVAL", () -> {
            final Rig r = rig(DeviceProfiles.rxe());
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            final MemoryRegion m = r.mr(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC));
            q.postSend(SendWr.fetchAndAdd(1, Sge.of(m, 0, 8), r.buf() + 4, m.rkey(), 1));
        }, "not 8-byte aligned"));
        c.add(c("inline data from an unmapped address", "EFAULT", () -> {
            final Rig r = cx5();
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            q.postSend(SendWr.send(1, List.of(new Sge(0x10_0000L, 8, 0))).withFlags(EnumSet.of(SendFlag.INLINE)));
        }, "inline data at 0x100000"));
        c.add(c("a FLUSH built without its operation", "EINVAL", () -> {
            final Rig r = rig(DeviceProfiles.rxe());
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            q.postSend(new SendWr(1, WrOpcode.FLUSH, List.of(), EnumSet.noneOf(SendFlag.class), r.buf(), 0, 0, 0,
                0, 0));
        }, "build it with SendWr.flush"));
        c.add(c("an ATOMIC_WRITE with a gather list", "EINVAL", () -> {
            final Rig r = rig(DeviceProfiles.rxe());
            final QueuePair q = r.connected(EnumSet.noneOf(Access.class));
            final MemoryRegion m = r.mr(LW);
            q.postSend(new SendWr(1, WrOpcode.ATOMIC_WRITE, List.of(Sge.of(m, 0, 8)), EnumSet.noneOf(SendFlag.class),
                r.buf(), m.rkey(), 0, 0, 0, 0));
        }, "takes no gather list"));
        // SRQs
        c.add(c("an SRQ without its attr", "EINVAL", () -> cx5().pd().createSrq(null), "srq_init_attr is null"));
        c.add(c("an SRQ past max_srq", "ENOMEM", () -> {
            final Rig r = rig(with(DeviceProfiles.connectx5(), b -> b.maxSrq(1)));
            r.pd().createSrq(new SrqAttr(4, 1, 0));
            r.pd().createSrq(new SrqAttr(4, 1, 0));
        }, "max_srq=1", "destroy an SRQ first"));
        c.add(c("an SRQ receive of a null list", "EINVAL", () -> cx5().pd().createSrq(new SrqAttr(4, 1, 0))
            .postRecv(null), "work-request list is null"));
        c.add(c("an SRQ receive of a null work request", "EINVAL", () -> cx5().pd().createSrq(
            new SrqAttr(4, 1, 0)).postRecv(Arrays.asList((RecvWr)null)), "the work request is null"));
        c.add(c("a limit armed on a destroyed SRQ", "EINVAL", () -> {
            final SharedReceiveQueue s = cx5().pd().createSrq(new SrqAttr(4, 1, 0));
            s.close();
            s.modifyLimit(1);
        }, "the SRQ is destroyed"));
        return c;
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
        c.add(c("an MR past the driver's translation entries", "EINVAL", () -> {
            final DeviceProfile efa = DriverProfiles.efa();
            final Rig r = rig(with(efa.withTraits(traitsWith(efa.traits(), "maxTranslationEntries", 4L)),
                b -> b.pageSizeCap(4096)));
            r.pd().regMr(r.buf(), 64 * 1024, LW);
        }, "translation entries", "register it in smaller MRs"));
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
