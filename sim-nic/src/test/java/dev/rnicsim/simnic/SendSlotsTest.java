package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * When a send-queue slot is free again ({@link ProviderRule#SEND_QUEUE_FREED_AT_POLL}, {@link SendSlots}): on mlx5
 * only when a completion of its work request or of a later one is polled; on rxe once the device finished it.
 */
class SendSlotsTest
{
    private static final int DEPTH = 4;

    /** A connected pair whose requester has a send queue of {@link #DEPTH}, and the target of its writes. */
    private record Pair(RuleRig rig, QueuePair qp, MemoryRegion src, long srcAddr, MemoryRegion dst, long dstAddr)
    {
        static Pair of(final DeviceProfile profile)
        {
            return of(profile, DEPTH);
        }

        static Pair of(final DeviceProfile profile, final int depth)
        {
            final RuleRig rig = RuleRig.unconnected(profile);
            final QueuePair a = rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, QpType.RC,
                new QpCap(depth, depth, 1, 1, 0), false));
            final QueuePair b = rig.pdB.createQp(QpInitAttr.rc(rig.cqB));
            a.connect(b.address(), RuleRig.ALL_REMOTE);
            b.connect(a.address(), RuleRig.ALL_REMOTE);
            final long src = rig.bufferA(4096);
            final long dst = rig.bufferB(4096);
            return new Pair(rig, a, rig.pdA.regMr(src, 4096, RuleRig.LOCAL), src,
                rig.pdB.regMr(dst, 4096, RuleRig.REMOTE_ALL), dst);
        }

        void write(final long wrId, final boolean signaled)
        {
            final SendWr wr = SendWr.write(wrId, sgl(sge(src, srcAddr, 8)), dstAddr, dst.rkey());
            qp.postSend(signaled ? wr : wr.withFlags(EnumSet.noneOf(SendFlag.class)));
            // the devices work until nothing is left: the work request is finished before the next is posted
            rig.fabric.progressAll();
        }

        PostException refused(final long wrId, final boolean signaled)
        {
            return catchThrowableOfType(PostException.class, () -> write(wrId, signaled));
        }
    }

    @Test
    void shouldHoldTheSlotsOfUnsignaledWorkRequestsOnMlx5UntilASignaledOneAfterThemIsPolled()
    {
        final Pair p = Pair.of(DeviceProfiles.connectx5());
        for (int i = 1; i <= DEPTH; i++)
        {
            p.write(i, false);
        }
        assertThat(((SimQp)p.qp()).sendsWaiting()).as("the device finished them").isZero();
        final PostException full = p.refused(9, false);
        assertThat(full.errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(full.getMessage()).contains("send queue full: 4 work requests hold its slots = max_send_wr=4")
            .contains("(0 not finished, 4 finished whose completion, or a later one's, was not polled)")
            .contains("signal at least one work request in every max_send_wr");
    }

    @Test
    void shouldFreeOneSlotPerPolledCompletionInPostingOrderWhenManyWaitOnMlx5()
    {
        // More completions wait than SendSlots' ring of marks starts with (8), after some were polled: the ring wraps,
        // grows, and keeps their order.
        // libmlx5 grants 32 for 20 asked: 256-byte WQEs in a queue of 8 KiB (QpCaps)
        final Pair p = Pair.of(DeviceProfiles.connectx5(), 20);
        final int depth = p.qp().cap().maxSendWr();
        assertThat(depth).isEqualTo(32);
        for (int i = 1; i <= 5; i++)
        {
            p.write(i, true);
        }
        assertThat(p.rig().cqA.poll(3)).extracting(WorkCompletion::wrId).containsExactly(1L, 2L, 3L);
        for (int i = 6; i <= depth + 3; i++)
        {
            p.write(i, true);
        }
        assertThat(p.refused(100, true).errno()).as("every slot held by a completion not polled")
            .isEqualTo(Errno.ENOMEM.code());
        for (int i = 4; i <= depth + 3; i++)
        {
            assertThat(p.rig().cqA.poll(1)).extracting(WorkCompletion::wrId).as("completions in posting order")
                .containsExactly((long)i);
            p.write(100 + i, false);
            assertThat(p.refused(200 + i, false)).as("polling completion %d freed exactly one slot", i).isNotNull();
        }
    }

    @Test
    void shouldFreeEverySlotUpToThePolledCompletionOnMlx5()
    {
        final Pair p = Pair.of(DeviceProfiles.connectx5());
        p.write(1, false);
        p.write(2, false);
        p.write(3, true);
        p.write(4, false);
        assertThat(p.refused(5, true).errno()).as("finished but not polled").isEqualTo(Errno.ENOMEM.code());
        assertThat(p.rig().pollA()).extracting(WorkCompletion::wrId).containsExactly(3L);
        // 1, 2 and 3 are free; 4 (unsignaled, after the polled completion) still holds its slot.
        p.write(5, false);
        p.write(6, false);
        p.write(7, false);
        assertThat(p.refused(8, false).errno()).isEqualTo(Errno.ENOMEM.code());
    }

    @Test
    void shouldHoldTheSlotOfASignaledWorkRequestOnMlx5UntilItsCompletionIsPolled()
    {
        final Pair p = Pair.of(DeviceProfiles.connectx5());
        for (int i = 1; i <= DEPTH; i++)
        {
            p.write(i, true);
        }
        assertThat(p.refused(5, true).errno()).isEqualTo(Errno.ENOMEM.code());
        assertThat(p.rig().cqA.poll(1)).extracting(WorkCompletion::wrId).containsExactly(1L);
        p.write(5, true);
        assertThat(p.refused(6, true).errno()).isEqualTo(Errno.ENOMEM.code());
    }

    @Test
    void shouldFreeASlotOnRxeOnceTheDeviceFinishedTheWorkRequest()
    {
        final Pair p = Pair.of(DeviceProfiles.rxe());
        for (int i = 1; i <= 3 * DEPTH; i++)
        {
            p.write(i, false);
        }
        assertThat(((SimQp)p.qp()).sendsWaiting()).isZero();
    }

    @Test
    void shouldEmptyTheSendQueueAtResetSoThatWorkPostedAfterItCompletes()
    {
        final Pair p = Pair.of(DeviceProfiles.connectx5());
        for (int i = 1; i <= DEPTH; i++)
        {
            p.write(i, false);
        }
        final QueuePair b = p.rig().pdB.createQp(QpInitAttr.rc(p.rig().cqB));
        final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
        p.qp().modify(reset.build(), reset.mask());
        p.qp().connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(p.qp().address(), RuleRig.ALL_REMOTE);
        p.write(10, true);
        assertThat(p.rig().pollA()).extracting(WorkCompletion::wrId).containsExactly(10L);
    }
}
