package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.Device;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Verbs;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The resource tree Context → PD → {MR, QP} and Context → CQ ({@code ib_uverbs_cleanup_ufile}): what
 * closing releases, idempotence, the CQ that is still in use, queue rings charged to RLIMIT_MEMLOCK, verbs on
 * closed objects, and the device list.
 */
class LifecycleResourceTreeTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;

    private final SimFabric fabric = new SimFabric();
    private final SimHost host = fabric.addHost("h");
    private final SimDevice device = host.addDevice("sim:h/mlx5_0", DeviceProfiles.connectx5());

    private SimContext open()
    {
        return device.open(host.host().spawn("app"));
    }

    private static void assertNoPins(final SimDevice device, final UserProcess process)
    {
        assertThat(process.pinnedVmPages()).isZero();
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isZero();
        assertThat(device.counter(SimCounter.MR_LIVE)).isZero();
        assertThat(device.counter(SimCounter.MTT_ENTRIES_IN_USE)).isZero();
    }

    private static void assertEinval(final Executable verb)
    {
        final VerbsException e = catchThrowableOfType(VerbsException.class, verb::execute);
        assertThat(e).as("the verb throws").isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void shouldCloseEveryPdMrQpAndCqAndLeaveNoPinWhenTheContextCloses()
    {
        final SimContext ctx = open();
        final UserProcess process = ctx.process();
        final ProtectionDomain pd1 = ctx.allocPd();
        final ProtectionDomain pd2 = ctx.allocPd();
        final CompletionQueue cq1 = ctx.createCq(16);
        final CompletionQueue cq2 = ctx.createCq(16);
        final QueuePair qp1 = pd1.createQp(QpInitAttr.rc(cq1));
        final QueuePair qp2 = pd2.createQp(new QpInitAttr(cq1, cq2, qp1.type(), QpInitAttr.rc(cq1).cap(), false));
        qp1.connect(qp2.address(), RuleRig.ALL_REMOTE);
        qp2.connect(qp1.address(), RuleRig.ALL_REMOTE);
        final long buf = ctx.memory().allocate(256 * KIB, Backing.BASE_PAGES);
        final MemoryRegion mr1 = pd1.regMr(buf, 128 * KIB, RuleRig.REMOTE_ALL);
        final MemoryRegion mr2 = pd2.regMr(buf + 64 * KIB, 192 * KIB, RuleRig.LOCAL);
        final long pfn = process.translate(buf + 64 * KIB) >>> PhysicalMemory.FRAME_SHIFT;
        final PhysicalMemory ram = host.host().physicalMemory();
        assertThat(ram.pinCount(pfn)).isEqualTo(2);
        assertThat(process.pinnedVmPages()).isEqualTo(device.counter(SimCounter.PINNED_BYTES) / (4 * KIB))
            .isGreaterThan(32 + 48);

        ctx.close();

        for (final AutoCloseable r : List.of(pd1, pd2, cq1, cq2, qp1, qp2, mr1, mr2))
        {
            assertThat(r).extracting(LifecycleResourceTreeTest::isClosed).as("%s closed", r).isEqualTo(true);
        }
        assertThat(ctx.isClosed()).isTrue();
        assertNoPins(device, process);
        assertThat(ram.pinCount(pfn)).isZero();
        assertThat(device.contexts()).doesNotContain(ctx);
        assertThat(device.counter(SimCounter.MR_DEREGISTRATIONS)).isEqualTo(2);
        assertThat(process.vmas()).as("the rings are unmapped, the user's buffer is not").hasSize(1);
    }

    private static boolean isClosed(final AutoCloseable r)
    {
        return switch (r)
        {
            case ProtectionDomain pd -> pd.isClosed();
            case CompletionQueue cq -> cq.isClosed();
            case QueuePair qp -> qp.isClosed();
            case MemoryRegion mr -> mr.isClosed();
            default -> throw new IllegalArgumentException(String.valueOf(r));
        };
    }

    @Test
    void shouldDoNothingWhenAContextOrItsObjectsAreClosedTwice()
    {
        final SimContext ctx = open();
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(8);
        final QueuePair qp = pd.createQp(QpInitAttr.rc(cq));
        final long buf = ctx.memory().allocate(64 * KIB, Backing.BASE_PAGES);
        final MemoryRegion mr = pd.regMr(buf, 64 * KIB, RuleRig.LOCAL);

        mr.close();
        mr.close();
        qp.close();
        qp.close();
        cq.close();
        cq.close();
        final long deregs = device.counter(SimCounter.MR_DEREGISTRATIONS);
        ctx.close();
        ctx.close();
        pd.close();

        assertThat(deregs).isEqualTo(1);
        assertThat(device.counter(SimCounter.MR_DEREGISTRATIONS)).isEqualTo(1);
        assertThat(device.recentRegistrations()).hasSize(2);
        assertNoPins(device, ctx.process());
        assertThat(pd.isClosed()).isTrue();
    }

    @Test
    void shouldRefuseToDestroyACqStillUsedByAQpWithEbusyAndChangeNothing()
    {
        final SimContext ctx = open();
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(8);
        final CompletionQueue recvCq = ctx.createCq(8);
        final QueuePair qp = pd.createQp(new QpInitAttr(cq, recvCq, QpInitAttr.rc(cq).type(),
            QpInitAttr.rc(cq).cap(), false));
        final QueuePair peer = pd.createQp(QpInitAttr.rc(cq));
        qp.connect(peer.address(), RuleRig.ALL_REMOTE);
        peer.connect(qp.address(), RuleRig.ALL_REMOTE);
        final long pinnedVm = ctx.process().pinnedVmPages();
        final long pinnedBytes = device.counter(SimCounter.PINNED_BYTES);

        final VerbsException busy = catchThrowableOfType(VerbsException.class, cq::close);
        final VerbsException busyRecv = catchThrowableOfType(VerbsException.class, recvCq::close);

        assertThat(busy.errnoName()).isEqualTo(Errno.EBUSY);
        assertThat(busy.verb()).isEqualTo("ibv_destroy_cq");
        assertThat(busyRecv.errnoName()).isEqualTo(Errno.EBUSY);
        assertThat(cq.isClosed()).isFalse();
        assertThat(recvCq.isClosed()).isFalse();
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(pinnedVm);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBytes);
        // The CQ still works: a completion lands in it and can be polled.
        final long buf = ctx.memory().allocate(4 * KIB, Backing.BASE_PAGES);
        final MemoryRegion mr = pd.regMr(buf, 4 * KIB, RuleRig.REMOTE_ALL);
        qp.postSend(SendWr.write(1, sgl(sge(mr, buf, 8)), buf + 64, mr.rkey()));
        assertThat(cq.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        // Once its QPs are gone the CQ can go.
        qp.close();
        peer.close();
        cq.close();
        recvCq.close();
        assertThat(cq.isClosed()).isTrue();
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(mr.lengthBytes() / (4 * KIB));
    }

    @Test
    void shouldChargeQueueRingsToRlimitMemlockAndRefuseACqTooBigForItWithEnomem()
    {
        final SimContext ctx = open();
        final UserProcess process = ctx.process();
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(64);
        final long afterCq = process.pinnedVmPages();
        final QueuePair qp = pd.createQp(QpInitAttr.rc(cq));
        final long afterQp = process.pinnedVmPages();

        assertThat(afterCq).isPositive();
        assertThat(afterQp).isGreaterThan(afterCq);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(afterQp * 4 * KIB);
        assertThat(cq.cqe()).isGreaterThanOrEqualTo(64);
        final int vmasBefore = process.vmaCount();
        final VerbsException tooBig = catchThrowableOfType(VerbsException.class, () -> ctx.createCq(1 << 20));
        assertThat(tooBig.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(tooBig).hasMessageContaining("RLIMIT_MEMLOCK");
        assertThat(process.pinnedVmPages()).isEqualTo(afterQp);
        assertThat(process.vmaCount()).as("the failed ring is unmapped again").isEqualTo(vmasBefore);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(afterQp * 4 * KIB);
        // The rings and an MR share the one limit: what the rings hold is missing for MRs.
        final long buf = ctx.memory().allocate(8 * MIB, Backing.BASE_PAGES);
        final VerbsException mrTooBig = catchThrowableOfType(VerbsException.class,
            () -> pd.regMr(buf, 8 * MIB, RuleRig.LOCAL));
        assertThat(mrTooBig.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(pd.regMr(buf, 8 * MIB - afterQp * 4 * KIB, RuleRig.LOCAL).isClosed()).isFalse();
        // Destroying the QP gives its ring pages back.
        qp.close();
        assertThat(process.pinnedVmPages()).isEqualTo(8 * MIB / (4 * KIB) - (afterQp - afterCq));
        process.capIpcLock(true);
        assertThat(ctx.createCq(1 << 20).cqe()).isGreaterThanOrEqualTo(1 << 20);
    }

    @Test
    void shouldRefuseVerbsOnClosedObjectsWithEinval()
    {
        final SimContext ctx = open();
        final ProtectionDomain pd = ctx.allocPd();
        final ProtectionDomain closedPd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(8);
        final CompletionQueue closedCq = ctx.createCq(8);
        final QueuePair qp = pd.createQp(QpInitAttr.rc(cq));
        final long buf = ctx.memory().allocate(4 * KIB, Backing.BASE_PAGES);
        final MemoryRegion mr = pd.regMr(buf, 4 * KIB, RuleRig.LOCAL);
        closedPd.close();
        closedCq.close();
        qp.close();

        assertEinval(() -> closedPd.regMr(buf, 4 * KIB, RuleRig.LOCAL));
        assertEinval(() -> closedPd.createQp(QpInitAttr.rc(cq)));
        assertEinval(() -> closedCq.poll(1));
        assertEinval(() -> pd.createQp(QpInitAttr.rc(closedCq)));
        assertEinval(() -> qp.modifyToInit(RuleRig.ALL_REMOTE));
        assertEinval(qp::modifyToError);
        final PostException send = catchThrowableOfType(PostException.class,
            () -> qp.postSend(SendWr.send(1, sgl(sge(mr, buf, 8)))));
        final PostException recv = catchThrowableOfType(PostException.class,
            () -> qp.postRecv(RecvWr.of(1, sge(mr, buf, 8))));
        assertThat(send.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(recv.errnoName()).isEqualTo(Errno.EINVAL);

        ctx.close();

        assertEinval(ctx::allocPd);
        assertEinval(() -> ctx.createCq(8));
        assertEinval(ctx::queryDevice);
        assertEinval(() -> pd.regMr(buf, 4 * KIB, RuleRig.LOCAL));
        assertEinval(() -> cq.poll(1));
        assertThat(ctx.process().pinnedVmPages()).isZero();
    }

    @Test
    void shouldKeepTheFramesOfAnUnmappedBufferPinnedUntilItsMrIsDeregistered()
    {
        final RuleRig rig = RuleRig.connected();
        final long dst = rig.bufferB(16 * KIB);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 16 * KIB, RuleRig.REMOTE_ALL);
        final long pfn = rig.processB().translate(dst) >>> PhysicalMemory.FRAME_SHIFT;
        final PhysicalMemory ramB = rig.deviceB.host().host().physicalMemory();
        final long src = rig.bufferA(4 * KIB);
        rig.ctxA.memory().write(src, RuleRig.pattern(64, 2));
        final MemoryRegion srcMr = rig.pdA.regMr(src, 4 * KIB, RuleRig.LOCAL);

        rig.ctxB.memory().free(dst, 16 * KIB);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 64)), dst, dstMr.rkey()));

        assertThat(rig.processB().translate(dst)).as("the address no longer maps").isEqualTo(-1);
        assertThat(rig.pollA()).extracting(WorkCompletion::status).as("the NIC still reaches the pinned frames")
            .containsExactly(WcStatus.SUCCESS);
        assertThat(ramB.isAllocated(pfn)).isTrue();
        assertThat(ramB.pinCount(pfn)).isEqualTo(1);
        final byte[] landed = new byte[64];
        ramB.read(pfn << PhysicalMemory.FRAME_SHIFT, landed, 0, 64);
        assertThat(landed).isEqualTo(RuleRig.pattern(64, 2));
        dstMr.close();
        assertThat(ramB.pinCount(pfn)).isZero();
        assertThat(ramB.isAllocated(pfn)).as("the last unpin frees the orphaned frame").isFalse();
        assertThat(rig.processB().pinnedVmPages()).isEqualTo(rig.deviceB.counter(SimCounter.PINNED_BYTES) / (4 * KIB));
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldListTheBuiltInSimDevicesAndRefuseAnUnknownNameWithEnodev()
    {
        final List<String> names = Verbs.devices().stream().map(Device::name).toList();

        assertThat(names).contains("sim:connectx3", "sim:connectx5", "sim:connectx7", "sim:e810", "sim:rxe");
        assertThat(Verbs.device("sim:e810").name()).isEqualTo("sim:e810");
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> Verbs.device("sim:nope"));
        assertThat(e.errnoName()).isEqualTo(Errno.ENODEV);
        assertThat(e).hasMessageContaining("sim:nope").hasMessageContaining("sim:connectx5");
        try (Context ctx = Verbs.device("sim:rxe").open())
        {
            assertThat(ctx.queryDevice().maxMr()).isEqualTo(DeviceProfiles.rxe().attributes().maxMr());
            assertThat(ctx.device().name()).isEqualTo("sim:rxe");
        }
    }
}
