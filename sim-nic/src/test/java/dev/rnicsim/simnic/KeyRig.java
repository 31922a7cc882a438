package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.DeviceCap;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Fixture of the memory-window, rereg and fast-registration suites, on top of {@link RuleRig}: a registered
 * scratch buffer on the requester a, fresh connected QP pairs (an error completion moves both QPs of a pair to ERR,
 * so a test that provokes one continues on a new pair), one-call remote READ and WRITE that return the requester's
 * completion, the fabric trace, and a snapshot of what a refused call must leave unchanged. Not a test class.
 */
final class KeyRig
{
    static final long PAGE = 4096;
    /** Bytes of the requester's scratch buffer. */
    static final long SCRATCH_BYTES = 16 * PAGE;
    static final EnumSet<SendFlag> SIGNALED = EnumSet.of(SendFlag.SIGNALED);

    final RuleRig rig;
    /** Every span the fabric reported, in order. */
    final List<TraceEvent> trace = new ArrayList<>();
    /** The requester's scratch buffer and its MR (LOCAL_WRITE). */
    final long scratch;
    final MemoryRegion scratchMr;
    private long nextWrId = 1000;

    KeyRig(final RuleRig rig)
    {
        this.rig = rig;
        rig.fabric.addTraceListener(trace::add);
        scratch = rig.bufferA(SCRATCH_BYTES);
        scratchMr = rig.pdA.regMr(scratch, SCRATCH_BYTES, RuleRig.LOCAL);
    }

    /** Two connectx5 hosts, connected, the responder granting every remote right. */
    static KeyRig connectx5()
    {
        return new KeyRig(RuleRig.connected());
    }

    static KeyRig of(final DeviceProfile profile)
    {
        return new KeyRig(RuleRig.connected(profile, RuleRig.ALL_REMOTE));
    }

    /** A profile whose attributes are changed by {@code change}. */
    static DeviceProfile with(final DeviceProfile p, final UnaryOperator<DeviceAttributes.Builder> change)
    {
        return p.withAttributes(change.apply(p.attributes().toBuilder()).build());
    }

    /** A profile without the given device_cap_flags. */
    static DeviceProfile without(final DeviceProfile p, final DeviceCap... caps)
    {
        long flags = p.attributes().deviceCapFlags();
        for (final DeviceCap c : caps)
        {
            flags &= ~c.bit();
        }
        final long f = flags;
        final DeviceProfile changed = with(p, b -> b.deviceCapFlags(f));
        for (final DeviceCap c : caps)
        {
            assertThat(changed.attributes().has(c)).as("%s cleared", c).isFalse();
        }
        return changed;
    }

    SimDevice deviceB()
    {
        return rig.deviceB;
    }

    long nextWrId()
    {
        return nextWrId++;
    }

    /** A connected pair: a new QP of {@code pdOnA} on host a, a new QP of {@code pdOnB} on host b. */
    Pair pair(final ProtectionDomain pdOnA, final ProtectionDomain pdOnB)
    {
        final QueuePair a = pdOnA.createQp(QpInitAttr.rc(rig.cqA));
        final QueuePair b = pdOnB.createQp(QpInitAttr.rc(rig.cqB));
        a.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(a.address(), RuleRig.ALL_REMOTE);
        return new Pair(a, b);
    }

    /** A new connected pair in the rig's two PDs. */
    Pair pair()
    {
        return pair(rig.pdA, rig.pdB);
    }

    /** The rig's own pair. */
    Pair initial()
    {
        return new Pair(rig.qpA, rig.qpB);
    }

    /** A requester QP on a and the responder QP on b it is connected to. */
    record Pair(QueuePair a, QueuePair b)
    {
    }

    /**
     * Posts one work request and returns its completion, polled from the CQ of the QP's host (every other
     * completion polled is dropped).
     */
    WorkCompletion post(final QueuePair qp, final SendWr wr)
    {
        qp.postSend(wr);
        return completionOf(qp, wr.wrId());
    }

    /** The completion of {@code wrId} on {@code qp}, polled now; fails when there is none or more than one. */
    WorkCompletion completionOf(final QueuePair qp, final long wrId)
    {
        return only(drain(), qp, wrId);
    }

    /** Every completion waiting in both CQs. */
    List<WorkCompletion> drain()
    {
        final List<WorkCompletion> all = new ArrayList<>(rig.pollA());
        all.addAll(rig.pollB());
        return all;
    }

    /** The one completion of {@code wrId} on {@code qp} among {@code all}. */
    static WorkCompletion only(final List<WorkCompletion> all, final QueuePair qp, final long wrId)
    {
        final List<WorkCompletion> mine = all.stream().filter(w -> w.wrId() == wrId && w.qpNum() == qp.qpNum())
            .toList();
        assertThat(mine).as("completions of wr %d on QP 0x%x among %s", wrId, qp.qpNum(), all).hasSize(1);
        return mine.get(0);
    }

    /**
     * RDMA WRITE of {@code length} bytes (pattern {@code seed}) from the scratch buffer to {@code remoteAddr}.
     *
     * @return the requester's completion status.
     */
    WcStatus write(final QueuePair requester, final long remoteAddr, final int rkey, final int length,
        final int seed)
    {
        rig.processA().write(scratch, RuleRig.pattern(length, seed));
        return post(requester, SendWr.write(nextWrId(), RuleRig.sgl(RuleRig.sge(scratchMr, scratch, length)),
            remoteAddr, rkey)).status();
    }

    /**
     * RDMA READ of {@code length} bytes from {@code remoteAddr} into the scratch buffer (cleared first).
     *
     * @return the requester's completion status.
     */
    WcStatus read(final QueuePair requester, final long remoteAddr, final int rkey, final int length)
    {
        rig.processA().write(scratch, new byte[length]);
        return post(requester, SendWr.read(nextWrId(), RuleRig.sgl(RuleRig.sge(scratchMr, scratch, length)),
            remoteAddr, rkey)).status();
    }

    /** The first {@code length} bytes of the scratch buffer. */
    byte[] scratchBytes(final int length)
    {
        return rig.processA().read(scratch, length);
    }

    /** Writes through a fresh pair and checks the bytes landed at {@code remoteAddr} on b. */
    void assertWriteLands(final long remoteAddr, final int rkey, final int length)
    {
        final int seed = (int)(nextWrId % 200);
        assertThat(write(pair().a(), remoteAddr, rkey, length, seed)).as("WRITE rkey 0x%x at 0x%x", rkey,
            remoteAddr).isEqualTo(WcStatus.SUCCESS);
        assertThat(rig.processB().read(remoteAddr, length)).isEqualTo(RuleRig.pattern(length, seed));
    }

    /** Writes through a fresh pair and checks the responder refused the rkey. */
    void assertWriteRefused(final long remoteAddr, final int rkey, final int length)
    {
        assertThat(write(pair().a(), remoteAddr, rkey, length, 1)).as("WRITE rkey 0x%x at 0x%x", rkey, remoteAddr)
            .isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    /** ibv_bind_mw on {@code qp} that must complete successfully; returns the new rkey. */
    int bind1(final QueuePair qp, final MemoryWindow mw, final MwBindInfo info)
    {
        final long wrId = nextWrId();
        final int rkey = qp.bindMw(mw, wrId, SIGNALED, info);
        final WorkCompletion wc = completionOf(qp, wrId);
        assertThat(wc.status()).as("bind of %s", info).isEqualTo(WcStatus.SUCCESS);
        return rkey;
    }

    /** A posted BIND_MW of a type 2 window under {@code incRkey(mw.rkey())}; returns its completion. */
    WorkCompletion bind2(final QueuePair qp, final MemoryWindow mw, final MwBindInfo info)
    {
        return post(qp, SendWr.bindMw(nextWrId(), mw, SendWr.incRkey(mw.rkey()), info));
    }

    /** @return the number of "invalidate" spans (category invalidation) in the trace so far. */
    long invalidateSpans()
    {
        return trace.stream().filter(e -> e.name().equals("invalidate") && e.category().equals("invalidation"))
            .count();
    }

    /** @return the causes of the "invalidate" spans recorded from index {@code from} of the trace on. */
    List<Object> invalidateCauses(final int from)
    {
        return trace.subList(from, trace.size()).stream().filter(e -> e.name().equals("invalidate"))
            .map(e -> e.args().get("cause")).toList();
    }

    /**
     * What a refused call must leave unchanged on a device and its process: the counters of registrations, binds
     * and invalidations, pinned bytes, live MRs and windows, MTT and MPT occupancy, VmPin, and the trace's
     * invalidation spans.
     */
    record Footprint(long mwBinds, long keyInvalidations, long fastRegistrations, long reregistrations,
                     long registrations, long deregistrations, long pinnedBytes, long mrLive, long mttInUse,
                     long mptInUse, int windows, long pinnedVmPages, long invalidateSpans)
    {
    }

    Footprint footprintB()
    {
        return footprint(rig.deviceB, rig.processB().pinnedVmPages());
    }

    private Footprint footprint(final SimDevice d, final long vmPin)
    {
        return new Footprint(d.counter(SimCounter.MW_BINDS), d.counter(SimCounter.KEY_INVALIDATIONS),
            d.counter(SimCounter.FAST_REGISTRATIONS), d.counter(SimCounter.MR_REREGISTRATIONS),
            d.counter(SimCounter.MR_REGISTRATIONS), d.counter(SimCounter.MR_DEREGISTRATIONS),
            d.counter(SimCounter.PINNED_BYTES), d.counter(SimCounter.MR_LIVE), d.counter(SimCounter.MTT_ENTRIES_IN_USE),
            d.tables().mpt().inUse(), d.tables().windowCount(), vmPin, invalidateSpans());
    }

    /** Rights of a buffer windows may be bound to. */
    static EnumSet<Access> bindable()
    {
        return EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND);
    }
}
