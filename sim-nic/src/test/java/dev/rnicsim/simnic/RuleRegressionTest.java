package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.pattern;
import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;

import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcOpcode;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * Regression tests of rules fixed together: contexts tied to their process, RC responders that answer only their
 * connected QP, RNR waiters woken on self-loopback and after a partly refused postRecv, long-term read pins of the
 * zero page, MW_BIND write pins, unsigned pin-range checks, EINVAL for null arguments, provider-specific errnos and
 * completion statuses, polling 0 entries, deregistration that survives a failing listener, and unique QP numbers.
 * Each test fails when its fix is reverted.
 */
class RuleRegressionTest
{
    private static final int PAGE = 4096;

    /** A single host with one connectx5 device, for tests that need no second host. */
    private static SimDevice soloDevice()
    {
        return new SimFabric().addHost("solo").addDevice("sim:solo/mlx5_0", DeviceProfiles.connectx5());
    }

    private static WorkCompletion only(final List<WorkCompletion> wcs)
    {
        assertThat(wcs).hasSize(1);
        return wcs.get(0);
    }

    /** Runs a verb that must fail with a VerbsException (not a NullPointerException or anything else). */
    private static VerbsException verbsFailure(final ThrowingCallable verb)
    {
        final Throwable t = catchThrowable(verb);
        assertThat(t).as("the verb throws a VerbsException").isInstanceOf(VerbsException.class);
        return (VerbsException)t;
    }

    private static PostException postFailure(final ThrowingCallable verb)
    {
        final Throwable t = catchThrowable(verb);
        assertThat(t).as("the post throws a PostException").isInstanceOf(PostException.class);
        return (PostException)t;
    }

    private static byte[] ascii(final String s)
    {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    // ------------------------------------------------------------------ contexts and processes

    @Test
    void shouldRefuseToOpenTheDeviceWithEinvalForAProcessOfAnotherHostOrAnExitedProcess()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice device = fabric.addHost("a").addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
        final SimHost other = fabric.addHost("b");
        final UserProcess foreign = other.host().spawn("foreign");
        final UserProcess exited = device.host().host().spawn("gone");
        exited.exit();
        final Map<String, Long> countersBefore = device.counters();

        final VerbsException fromAnotherHost = verbsFailure(() -> device.open(foreign));
        final VerbsException fromExited = verbsFailure(() -> device.open(exited));

        assertThat(fromAnotherHost.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(fromExited.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(device.counters()).isEqualTo(countersBefore);
        assertThat(device.contexts()).isEmpty();
        assertThat(foreign.pinnedVmPages()).isZero();
        assertThatCode(foreign::exit).as("no context of this device hangs on the foreign process")
            .doesNotThrowAnyException();
    }

    @Test
    void shouldCloseTheContextAndUnpinEverythingWhenItsProcessExits()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice deviceA = fabric.addHost("a").addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
        final SimDevice deviceB = fabric.addHost("b").addDevice("sim:b/mlx5_0", DeviceProfiles.connectx5());
        final SimContext ctxA = (SimContext)deviceA.open();
        final SimContext ctxB = (SimContext)deviceB.open();
        final ProtectionDomain pdA = ctxA.allocPd();
        final ProtectionDomain pdB = ctxB.allocPd();
        final CompletionQueue cqA = ctxA.createCq(16);
        final CompletionQueue cqB = ctxB.createCq(16);
        final QueuePair qpA = pdA.createQp(QpInitAttr.rc(cqA));
        final QueuePair qpB = pdB.createQp(QpInitAttr.rc(cqB));
        qpA.connect(qpB.address(), RuleRig.ALL_REMOTE);
        qpB.connect(qpA.address(), RuleRig.ALL_REMOTE);
        final long src = ctxA.memory().allocate(PAGE, Backing.BASE_PAGES);
        ctxA.memory().write(src, pattern(PAGE, 2));
        final MemoryRegion srcMr = pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final long dst = ctxB.memory().allocate(4 * PAGE, Backing.BASE_PAGES);
        final MemoryRegion dstMr = pdB.regMr(dst, 4 * PAGE, RuleRig.REMOTE_ALL);
        final int oldRkey = dstMr.rkey();
        qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, 16)), dst, oldRkey));
        assertThat(only(cqA.poll(8)).status()).as("the pair works before the exit").isEqualTo(WcStatus.SUCCESS);
        final UserProcess process = ctxB.process();
        assertThat(process.pinnedVmPages()).isPositive();

        process.exit();

        assertThat(ctxB.isClosed()).isTrue();
        assertThat(pdB.isClosed()).isTrue();
        assertThat(dstMr.isClosed()).isTrue();
        assertThat(qpB.isClosed()).isTrue();
        assertThat(cqB.isClosed()).isTrue();
        assertThat(process.pinnedVmPages()).isZero();
        assertThat(deviceB.counters()).containsEntry("sim_pinned_bytes", 0L).containsEntry("sim_mr_live", 0L);
        assertThat(deviceB.contexts()).doesNotContain(ctxB);
        qpA.postSend(SendWr.write(2, sgl(sge(srcMr, src, 16)), dst, oldRkey));
        final WorkCompletion wc = only(cqA.poll(8));
        assertThat(wc.wrId()).isEqualTo(2);
        assertThat(wc.status()).as("the dead process's QP is gone: no ACK ever comes")
            .isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(ctxA.isClosed()).isFalse();
    }

    // ------------------------------------------------------------------ RNR waiters

    @Test
    void shouldCompleteAWaitingSendOnAQpConnectedToItselfOnceAReceiveIsPosted()
    {
        final SimDevice device = soloDevice();
        final SimContext ctx = (SimContext)device.open();
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(16);
        final QueuePair q = pd.createQp(QpInitAttr.rc(cq));
        q.connect(q.address(), EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
        final long buf = ctx.memory().allocate(2 * PAGE, Backing.BASE_PAGES);
        ctx.memory().write(buf, ascii("LOOPBACK"));
        final MemoryRegion mr = pd.regMr(buf, 2 * PAGE, RuleRig.LOCAL);

        q.postSend(SendWr.send(1, sgl(sge(mr, buf, 8))));

        assertThat(cq.poll(16)).as("the SEND waits for a receive (rnr_retry 7)").isEmpty();
        assertThat(((SimQp)q).sendsWaiting()).isEqualTo(1);

        q.postRecv(RecvWr.of(2, sge(mr, buf + PAGE, 64)));

        final List<WorkCompletion> wcs = cq.poll(16);
        assertThat(wcs).extracting(WorkCompletion::wrId, WorkCompletion::status, WorkCompletion::opcode)
            .containsExactlyInAnyOrder(tuple(1L, WcStatus.SUCCESS, WcOpcode.SEND),
                tuple(2L, WcStatus.SUCCESS, WcOpcode.RECV));
        assertThat(wcs).filteredOn(wc -> wc.wrId() == 2).extracting(WorkCompletion::byteLen).containsExactly(8L);
        assertThat(ctx.memory().read(buf + PAGE, 8)).isEqualTo(ascii("LOOPBACK"));
        assertThat(((SimQp)q).sendsWaiting()).isZero();
        assertThat(((SimQp)q).receivesPosted()).isZero();
        assertThat(q.state()).isEqualTo(QpState.RTS);
    }

    @Test
    void shouldCompleteASendWaitingOnRnrWhenAPostRecvListIsPartlyRefused()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(PAGE);
        final long dst = rig.bufferB(PAGE);
        rig.ctxA.memory().write(src, pattern(PAGE, 4));
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(1, sgl(sge(srcMr, src, 8))));
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isEqualTo(1);
        final Sge[] tooMany = new Sge[QpInitAttr.rc(rig.cqB).cap().maxRecvSge() + 1];
        Arrays.fill(tooMany, sge(dstMr, dst + 100, 1));

        final PostException e = postFailure(() -> rig.qpB.postRecv(List.of(RecvWr.of(10, sge(dstMr, dst, 64)),
            new RecvWr(11, List.of(tooMany)))));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.badWrIndex()).isEqualTo(1);
        final WorkCompletion sent = only(rig.pollA());
        assertThat(sent.wrId()).isEqualTo(1);
        assertThat(sent.status()).isEqualTo(WcStatus.SUCCESS);
        final WorkCompletion received = only(rig.pollB());
        assertThat(received.wrId()).isEqualTo(10);
        assertThat(received.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(received.byteLen()).isEqualTo(8);
        assertThat(rig.ctxB.memory().read(dst, 8)).isEqualTo(rig.ctxA.memory().read(src, 8));
        assertThat(((SimQp)rig.qpB).receivesPosted()).as("the first receive is consumed").isZero();
        assertThat(((SimQp)rig.qpA).sendsWaiting()).isZero();
    }

    // ------------------------------------------------------------------ RC isolation

    @Test
    void shouldLetNoThirdQpReachAResponderConnectedToAnotherQp()
    {
        final RuleRig rig = RuleRig.connected();
        final SimDevice deviceC = rig.fabric.addHost("c").addDevice("sim:c/dev0", DeviceProfiles.connectx5());
        final SimContext ctxC = (SimContext)deviceC.open();
        final ProtectionDomain pdC = ctxC.allocPd();
        final CompletionQueue cqC = ctxC.createCq(16);
        final QueuePair writer = pdC.createQp(QpInitAttr.rc(cqC));
        final QueuePair sender = pdC.createQp(QpInitAttr.rc(cqC));
        writer.connect(rig.qpB.address(), RuleRig.ALL_REMOTE);
        sender.connect(rig.qpB.address(), RuleRig.ALL_REMOTE);
        final long src = ctxC.memory().allocate(PAGE, Backing.BASE_PAGES);
        ctxC.memory().write(src, pattern(PAGE, 9));
        final MemoryRegion srcMr = pdC.regMr(src, PAGE, RuleRig.LOCAL);
        final long dst = rig.bufferB(2 * PAGE);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 2 * PAGE, RuleRig.REMOTE_ALL);
        rig.qpB.postRecv(RecvWr.of(50, sge(dstMr, dst + PAGE, 64)));

        writer.postSend(SendWr.write(1, sgl(sge(srcMr, src, 64)), dst, dstMr.rkey()));
        sender.postSend(SendWr.send(2, sgl(sge(srcMr, src, 8))));

        assertThat(cqC.poll(16)).extracting(WorkCompletion::wrId, WorkCompletion::status).containsExactly(
            tuple(1L, WcStatus.RETRY_EXC_ERR),
            tuple(2L, WcStatus.RETRY_EXC_ERR));
        assertThat(rig.ctxB.memory().read(dst, 2 * PAGE)).isEqualTo(new byte[2 * PAGE]);
        assertThat(((SimQp)rig.qpB).receivesPosted()).as("the receive is not consumed").isEqualTo(1);
        assertThat(rig.pollB()).isEmpty();
        assertThat(rig.qpB.state()).isEqualTo(QpState.RTS);
        final long legit = rig.bufferA(PAGE);
        rig.ctxA.memory().write(legit, ascii("CONNECTD"));
        final MemoryRegion legitMr = rig.pdA.regMr(legit, PAGE, RuleRig.LOCAL);
        rig.qpA.postSend(SendWr.send(3, sgl(sge(legitMr, legit, 8))));
        assertThat(only(rig.pollA()).status()).as("the connected requester still gets through")
            .isEqualTo(WcStatus.SUCCESS);
        assertThat(only(rig.pollB()).wrId()).isEqualTo(50);
        assertThat(rig.ctxB.memory().read(dst + PAGE, 8)).isEqualTo(ascii("CONNECTD"));
    }

    // ------------------------------------------------------------------ pins

    @Test
    void shouldNotPinTheSharedZeroPageForALongTermReadOnlyRegistrationOfNeverWrittenMemory()
    {
        final RuleRig rig = RuleRig.connected();
        final long buf = rig.bufferB(PAGE);
        final MemoryRegion mr = rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.REMOTE_READ));
        final PhysicalMemory ram = rig.deviceB.host().host().physicalMemory();
        assertThat(ram.pinCount(ram.zeroPfn())).as("pins on the shared zero page").isZero();
        final long dst = rig.bufferA(PAGE);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, PAGE, RuleRig.LOCAL);

        rig.ctxB.memory().write(buf, ascii("CPUDATA!"));
        rig.qpA.postSend(SendWr.read(1, sgl(sge(dstMr, dst, 8)), buf, mr.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.ctxA.memory().read(dst, 8)).as("the pin and the CPU see the same page")
            .isEqualTo(ascii("CPUDATA!"));
    }

    @Test
    void shouldNotPinTheSharedZeroPageForALongTermReadOnlyRegistrationOfMemoryOnlyReadBefore()
    {
        final RuleRig rig = RuleRig.connected();
        final long buf = rig.bufferB(PAGE);
        assertThat(rig.ctxB.memory().read(buf, PAGE)).as("a CPU read maps the zero page").isEqualTo(new byte[PAGE]);
        final MemoryRegion mr = rig.pdB.regMr(buf, PAGE, EnumSet.of(Access.REMOTE_READ));
        final PhysicalMemory ram = rig.deviceB.host().host().physicalMemory();
        assertThat(ram.pinCount(ram.zeroPfn())).as("pins on the shared zero page").isZero();
        final long dst = rig.bufferA(PAGE);
        final MemoryRegion dstMr = rig.pdA.regMr(dst, PAGE, RuleRig.LOCAL);

        rig.ctxB.memory().write(buf, ascii("CPUDATA!"));
        rig.qpA.postSend(SendWr.read(1, sgl(sge(dstMr, dst, 8)), buf, mr.rkey()));

        assertThat(only(rig.pollA()).status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.ctxA.memory().read(dst, 8)).as("the pin and the CPU see the same page")
            .isEqualTo(ascii("CPUDATA!"));
    }

    @Test
    void shouldPinForWriteWithMwBindAndRefuseAReadOnlyMappingWithEfault()
    {
        final SimDevice device = soloDevice();
        final SimContext ctx = (SimContext)device.open();
        final ProtectionDomain pd = ctx.allocPd();
        final UserProcess process = ctx.process();
        final long readOnly = process.mmap(0, 2 * PAGE, Set.of(Prot.READ), Set.of(MapFlag.PRIVATE,
            MapFlag.ANONYMOUS));
        final long pinnedBefore = process.pinnedVmPages();
        final Map<String, Long> countersBefore = device.counters();

        final VerbsException e = verbsFailure(() -> pd.regMr(readOnly, 2 * PAGE, EnumSet.of(Access.MW_BIND)));

        assertThat(e.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(process.pinnedVmPages()).as("nothing pinned").isEqualTo(pinnedBefore);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(countersBefore.get("sim_pinned_bytes"));
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(countersBefore.get("sim_mr_live"));
        assertThat(device.counter(SimCounter.MR_REGISTRATION_FAILURES)).isEqualTo(1);

        final MemoryRegion readable = pd.regMr(readOnly, 2 * PAGE, EnumSet.of(Access.REMOTE_READ));

        assertThat(readable.isClosed()).isFalse();
        assertThat(process.pinnedVmPages()).isEqualTo(pinnedBefore + 2);
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(countersBefore.get("sim_mr_live") + 1);
    }

    @Test
    void shouldRefuseAnUpperHalfAddressWithEfaultAndAWrappingRangeWithEinval()
    {
        final SimDevice device = soloDevice();
        final SimContext ctx = (SimContext)device.open();
        final ProtectionDomain pd = ctx.allocPd();
        final long pinnedBefore = ctx.process().pinnedVmPages();

        final VerbsException upperHalf = verbsFailure(() -> pd.regMr(0x8000_0000_0000_0000L, PAGE,
            RuleRig.REMOTE_ALL));
        final VerbsException wraps = verbsFailure(() -> pd.regMr(-4096L, 8192, RuleRig.REMOTE_ALL));

        assertThat(upperHalf.errnoName()).as("an upper-half address is no overflow: it is past TASK_SIZE")
            .isEqualTo(Errno.EFAULT);
        assertThat(wraps.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(pinnedBefore);
        assertThat(device.counter(SimCounter.MR_LIVE)).isZero();
    }

    // ------------------------------------------------------------------ null arguments

    @Test
    void shouldRefuseNullArgumentsWithEinvalInsteadOfANullPointerException()
    {
        final RuleRig rig = RuleRig.connected();
        final long buf = rig.bufferA(PAGE);
        final MemoryRegion mr = rig.pdA.regMr(buf, PAGE, RuleRig.LOCAL);
        final SendWr write = SendWr.write(1, List.of(), 0, 0);
        final Set<Access> withNull = new HashSet<>(Arrays.asList((Access)null));
        final QueuePair fresh = rig.pdA.createQp(QpInitAttr.rc(rig.cqA));
        final QueuePair inInit = rig.pdA.createQp(QpInitAttr.rc(rig.cqA));
        inInit.modifyToInit(RuleRig.ALL_REMOTE);
        final long mrLive = rig.deviceA.counter(SimCounter.MR_LIVE);

        final List<VerbsException> einval = List.of(
            verbsFailure(() -> rig.pdA.regMr(buf, PAGE, null)),
            verbsFailure(() -> rig.pdA.regMr(buf, PAGE, buf, null)),
            verbsFailure(() -> rig.pdA.regMr(buf, PAGE, withNull)),
            verbsFailure(() -> rig.pdA.createQp(null)),
            verbsFailure(() -> fresh.modifyToInit(null)),
            verbsFailure(() -> inInit.modifyToRtr(null, 12)),
            verbsFailure(() -> rig.ctxA.memory().allocate(PAGE, null)));
        final PostException nullSendList = postFailure(() -> rig.qpA.postSend((List<SendWr>)null));
        final PostException nullSend = postFailure(() -> rig.qpA.postSend(Arrays.asList(write, null)));
        final PostException nullRecvList = postFailure(() -> rig.qpB.postRecv((List<RecvWr>)null));
        final PostException nullRecv = postFailure(() -> rig.qpB.postRecv(Arrays.asList(RecvWr.of(7), null)));
        final VerbsException nullData = verbsFailure(() -> rig.ctxA.memory().write(buf, null));

        for (final VerbsException e : einval)
        {
            assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EINVAL);
        }
        for (final PostException e : List.of(nullSendList, nullSend, nullRecvList, nullRecv))
        {
            assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(Errno.EINVAL);
        }
        assertThat(nullSendList.badWrIndex()).isZero();
        assertThat(nullSend.badWrIndex()).isEqualTo(1);
        assertThat(nullRecvList.badWrIndex()).isZero();
        assertThat(nullRecv.badWrIndex()).isEqualTo(1);
        assertThat(nullData.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(rig.pollA()).as("the work request before the null one was posted").extracting(WorkCompletion::wrId)
            .containsExactly(1L);
        assertThat(((SimQp)rig.qpB).receivesPosted()).isEqualTo(1);
        assertThat(fresh.state()).isEqualTo(QpState.RESET);
        assertThat(inInit.state()).isEqualTo(QpState.INIT);
        assertThat(rig.deviceA.counter(SimCounter.MR_LIVE)).isEqualTo(mrLive);
    }

    // ------------------------------------------------------------------ provider rules

    @Test
    void shouldRefuseInlineDataLongerThanMaxInlineDataWithEnomemOnMlx5AndEinvalOnRxe()
    {
        assertThat(inlineOverflowErrno(DeviceProfiles.connectx5())).isEqualTo(Errno.ENOMEM);
        assertThat(inlineOverflowErrno(DeviceProfiles.rxe())).isEqualTo(Errno.EINVAL);
    }

    private static Errno inlineOverflowErrno(final DeviceProfile profile)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, RuleRig.REMOTE_ALL);
        final int maxInline = rig.qpA.cap().maxInlineDataBytes(); // what the provider granted (QpCaps)
        final SendWr tooLong = SendWr.write(1, sgl(sge(srcMr, src, maxInline + 1)), dst, dstMr.rkey())
            .withFlags(EnumSet.of(SendFlag.SIGNALED, SendFlag.INLINE));

        final PostException e = postFailure(() -> rig.qpA.postSend(tooLong));

        assertThat(e.badWrIndex()).isZero();
        assertThat(rig.pollA()).isEmpty();
        assertThat(rig.ctxB.memory().read(dst, PAGE)).isEqualTo(new byte[PAGE]);
        return e.errnoName();
    }

    @Test
    void shouldCompleteASendThroughAStaleLkeyWithLocQpOpErrOnRxeAndLocProtErrOnMlx5()
    {
        assertThat(staleGatherStatus(DeviceProfiles.rxe())).isEqualTo(WcStatus.LOC_QP_OP_ERR);
        assertThat(staleGatherStatus(DeviceProfiles.connectx5())).isEqualTo(WcStatus.LOC_PROT_ERR);
    }

    private static WcStatus staleGatherStatus(final DeviceProfile profile)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, RuleRig.LOCAL);
        rig.qpB.postRecv(RecvWr.of(20, sge(dstMr, dst, 64)));
        final int stale = srcMr.lkey();
        srcMr.close();

        rig.qpA.postSend(SendWr.send(1, sgl(new Sge(src, 8, stale))));

        final WorkCompletion wc = only(rig.pollA());
        assertThat(wc.wrId()).isEqualTo(1);
        assertThat(rig.ctxB.memory().read(dst, 64)).isEqualTo(new byte[64]);
        return wc.status();
    }

    @Test
    void shouldCompleteAReceiveWithABadLkeyWithLocQpOpErrOnRxeAndLocProtErrOnMlx5AndRemOpErrAtTheRequester()
    {
        assertThat(badReceiveStatuses(DeviceProfiles.rxe())).containsExactly(WcStatus.REM_OP_ERR,
            WcStatus.LOC_QP_OP_ERR);
        assertThat(badReceiveStatuses(DeviceProfiles.connectx5())).containsExactly(WcStatus.REM_OP_ERR,
            WcStatus.LOC_PROT_ERR);
    }

    /** @return the requester's status, then the responder's receive status. */
    private static List<WcStatus> badReceiveStatuses(final DeviceProfile profile)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final long src = rig.bufferA(PAGE);
        rig.ctxA.memory().write(src, pattern(PAGE, 7));
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, RuleRig.LOCAL);
        final int stale = dstMr.lkey();
        dstMr.close();
        rig.qpB.postRecv(RecvWr.of(30, new Sge(dst, 64, stale)));

        rig.qpA.postSend(SendWr.send(1, sgl(sge(srcMr, src, 8))));

        final WorkCompletion sent = only(rig.pollA());
        final WorkCompletion received = only(rig.pollB());
        assertThat(sent.wrId()).isEqualTo(1);
        assertThat(received.wrId()).isEqualTo(30);
        assertThat(rig.ctxB.memory().read(dst, 64)).isEqualTo(new byte[64]);
        return List.of(sent.status(), received.status());
    }

    // ------------------------------------------------------------------ completion queue

    @Test
    void shouldReturnNothingAndKeepTheCompletionsWhenPollingZeroOrNegativeEntries()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(PAGE);
        final long dst = rig.bufferB(PAGE);
        final MemoryRegion srcMr = rig.pdA.regMr(src, PAGE, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, PAGE, RuleRig.REMOTE_ALL);
        for (int i = 1; i <= 3; i++)
        {
            rig.qpA.postSend(SendWr.write(i, sgl(sge(srcMr, src, 8)), dst + 8L * i, dstMr.rkey()));
        }
        rig.fabric.progressAll();

        final List<WorkCompletion> zero = rig.cqA.poll(0);
        final List<WorkCompletion> negative = rig.cqA.poll(-1);

        assertThat(zero).isEmpty();
        assertThat(negative).isEmpty();
        assertThat(((SimCq)rig.cqA).depth()).isEqualTo(3);
        assertThat(rig.pollA()).extracting(WorkCompletion::wrId).containsExactly(1L, 2L, 3L);
    }

    // ------------------------------------------------------------------ deregistration

    @Test
    void shouldDeregisterCompletelyEvenWhenARegistrationListenerThrowsOnDereg()
    {
        final SimDevice device = soloDevice();
        final SimContext ctx = (SimContext)device.open();
        final ProtectionDomain pd = ctx.allocPd();
        final long buf = ctx.memory().allocate(4 * PAGE, Backing.BASE_PAGES);
        final long mrLiveBefore = device.counter(SimCounter.MR_LIVE);
        final long pinnedBytesBefore = device.counter(SimCounter.PINNED_BYTES);
        final long pinnedPagesBefore = ctx.process().pinnedVmPages();
        device.addRegistrationListener(e ->
        {
            if (e.kind() == RegistrationEvent.Kind.DEREG)
            {
                throw new IllegalStateException("boom");
            }
        });
        final MemoryRegion mr = pd.regMr(buf, 4 * PAGE, RuleRig.REMOTE_ALL);
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(mrLiveBefore + 1);

        final Throwable thrown = catchThrowable(mr::close);

        assertThat(thrown).isInstanceOf(IllegalStateException.class).hasMessage("boom");
        assertThat(mr.isClosed()).isTrue();
        assertThatCode(mr::close).as("a second close does nothing").doesNotThrowAnyException();
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(mrLiveBefore);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo(pinnedBytesBefore);
        assertThat(ctx.process().pinnedVmPages()).isEqualTo(pinnedPagesBefore);
        assertThat(device.counter(SimCounter.MR_DEREGISTRATIONS)).isEqualTo(1);
        assertThat(((SimPd)pd).memoryRegions()).doesNotContain((SimMr)mr);
    }

    // ------------------------------------------------------------------ QP numbers

    @Test
    void shouldGiveLiveQpsDistinctNumbersNeverZeroOrOneAcrossTheWrapOfTheQpNumberSpace()
        throws ReflectiveOperationException
    {
        // The 24-bit QP number counter only wraps after 2^24 creations: it is moved near the wrap instead, and
        // moved back there before the second batch, as one lap of the number space later.
        final SimDevice device = soloDevice();
        final SimContext ctx = (SimContext)device.open();
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(16);
        final int nearWrap = 0x1_000000 - 20;
        final List<QueuePair> live = new ArrayList<>();
        qpNumberCounter(device, nearWrap);
        for (int i = 0; i < 50; i++)
        {
            live.add(pd.createQp(QpInitAttr.rc(cq)));
        }
        for (int i = 1; i < 50; i += 2)
        {
            live.get(i).close();
        }
        live.removeIf(QueuePair::isClosed);
        qpNumberCounter(device, nearWrap);
        for (int i = 0; i < 50; i++)
        {
            live.add(pd.createQp(QpInitAttr.rc(cq)));
        }

        assertThat(live).hasSize(75);
        assertThat(live).extracting(QueuePair::qpNum).doesNotHaveDuplicates().allSatisfy(n -> assertThat(n)
            .isBetween(2, 0xffffff));
        for (final QueuePair qp : live)
        {
            assertThat(device.qp(qp.qpNum())).isSameAs(qp);
        }
    }

    @Test
    void shouldGiveLiveQpsDistinctNumbersNeverZeroOrOne()
    {
        final SimDevice device = soloDevice();
        final SimContext ctx = (SimContext)device.open();
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(16);
        final List<QueuePair> live = new ArrayList<>();
        for (int i = 0; i < 50; i++)
        {
            live.add(pd.createQp(QpInitAttr.rc(cq)));
        }
        for (int i = 1; i < 50; i += 2)
        {
            live.get(i).close();
        }
        live.removeIf(QueuePair::isClosed);
        for (int i = 0; i < 50; i++)
        {
            live.add(pd.createQp(QpInitAttr.rc(cq)));
        }

        assertThat(live).hasSize(75);
        assertThat(live).extracting(QueuePair::qpNum).doesNotHaveDuplicates().allSatisfy(n -> assertThat(n)
            .isGreaterThanOrEqualTo(2));
    }

    private static void qpNumberCounter(final SimDevice device, final int next) throws ReflectiveOperationException
    {
        final Field field = DeviceObjects.class.getDeclaredField("nextQpNum");
        field.setAccessible(true);
        field.setInt(device.objects(), next);
    }
}
