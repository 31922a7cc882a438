package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.simnic.SimHost;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AtomicCap;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MrInitAttr;
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
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The verbs' errno paths (modules sim-nic and verbs-api) that no script verb reaches, reached through the Java
 * API as a program calls it: null arguments, closed objects, device limits set low, provider rules of a profile,
 * and the default methods of a backend without a feature. This class walks devices and PDs, registration, and the
 * queues (CQs, QPs, SRQs), and holds the rigs the other walks share; {@link ErrnoWalkWindowsMemory} walks memory
 * windows, fast registration, process and device memory, GPUs and backends. Stateless.
 */
final class ErrnoWalkVerbs
{
    static final long MIB = 1L << 20;
    static final EnumSet<Access> LW = EnumSet.of(Access.LOCAL_WRITE);

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

    static DeviceProfile without(final DeviceProfile p, final DeviceCap... caps)
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

    /** @return every case. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.addAll(devicesAndPds());
        c.addAll(registration());
        c.addAll(queues());
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
        }, "length=0", "at least one byte"));
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
        }, "length=0"));
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
}
