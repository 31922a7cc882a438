package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link TransportCheck}: a responder drops a packet whose BTH opcode is of another transport than its QP's type
 * (rxe_recv.c {@code check_type_state}): an RC requester towards a UC QP runs out of retries, a UC requester towards
 * an RC QP completes and nothing arrives.
 */
class TransportCheckTest
{
    private record Pair(RuleRig rig, QueuePair a, QueuePair b, MemoryRegion src, MemoryRegion dst)
    {
    }

    private static Pair connect(final QpType requester, final QpType responder)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair a = rig.pdA.createQp(QpInitAttr.rc(rig.cqA).withType(requester));
        final QueuePair b = rig.pdB.createQp(QpInitAttr.rc(rig.cqB).withType(responder));
        a.connect(b.address(), RuleRig.ALL_REMOTE);
        b.connect(a.address(), RuleRig.ALL_REMOTE);
        final MemoryRegion src = rig.pdA.regMr(rig.bufferA(4096), 4096, RuleRig.LOCAL);
        final MemoryRegion dst = rig.pdB.regMr(rig.bufferB(4096), 4096, RuleRig.REMOTE_ALL);
        rig.processA().write(src.addr(), "hello".getBytes(StandardCharsets.US_ASCII));
        return new Pair(rig, a, b, src, dst);
    }

    @Test
    void anRcWriteToAUcQpRunsOutOfRetriesAfterRetryCntPlusOneTimeoutsAndNamesTheMismatch()
    {
        final Pair p = connect(QpType.RC, QpType.UC);
        final long before = p.rig().fabric.clock().nowNs();
        p.a().postSend(SendWr.write(1, List.of(new Sge(p.src().addr(), 5, p.src().lkey())), p.dst().addr(),
            p.dst().rkey()));

        final WorkCompletion wc = p.rig().pollA().getFirst();
        assertThat(wc.status()).isEqualTo(WcStatus.RETRY_EXC_ERR);
        assertThat(wc.diagnosis().summary()).contains("RC QP 0x" + Integer.toHexString(p.a().qpNum()))
            .contains("UC QP 0x" + Integer.toHexString(p.b().qpNum())).contains("drops every packet");
        assertThat(wc.diagnosis().details()).anyMatch(d -> d.contains("connect QPs of the same type"));
        assertThat(p.rig().fabric.clock().nowNs() - before).as("retry_cnt + 1 local ACK timeouts, not one message")
            .isGreaterThan(100_000_000L);
        assertThat(p.rig().processB().read(p.dst().addr(), 5)).as("nothing placed").isEqualTo(new byte[5]);
        assertThat(p.rig().pollB()).isEmpty();
        assertThat(p.b().state()).isEqualTo(QpState.RTS);
    }

    @Test
    void aUcSendToAnRcQpCompletesAtTheRequesterAndNothingArrives()
    {
        final Pair p = connect(QpType.UC, QpType.RC);
        p.b().postRecv(new RecvWr(7, List.of(new Sge(p.dst().addr(), 4096, p.dst().lkey()))));
        p.a().postSend(SendWr.send(1, List.of(new Sge(p.src().addr(), 5, p.src().lkey()))));

        assertThat(p.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(p.rig().pollB()).as("the receive stays posted, nothing completes").isEmpty();
        assertThat(p.rig().processB().read(p.dst().addr(), 5)).isEqualTo(new byte[5]);
        assertThat(p.a().state()).isEqualTo(QpState.RTS);
        assertThat(p.b().state()).isEqualTo(QpState.RTS);
    }

    /** UC is unacknowledged ({@link AckTimeout}): a peer that is gone costs no ACK timeout and no retry. */
    @Test
    void aUcWriteToADestroyedPeerCompletesWithoutWaitingForAnAcknowledgement()
    {
        final Pair p = connect(QpType.UC, QpType.UC);
        p.b().close();
        final long before = p.rig().fabric.clock().nowNs();
        p.a().postSend(SendWr.write(1, List.of(new Sge(p.src().addr(), 5, p.src().lkey())), p.dst().addr(),
            p.dst().rkey()));

        assertThat(p.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(p.rig().fabric.clock().nowNs() - before).as("no local ACK timeout").isLessThan(1_000_000L);
        assertThat(p.rig().processB().read(p.dst().addr(), 5)).as("nothing placed").isEqualTo(new byte[5]);
        assertThat(p.a().state()).isEqualTo(QpState.RTS);
    }

    @Test
    void queuePairsOfOneTypeStillTalk()
    {
        final Pair p = connect(QpType.UC, QpType.UC);
        p.a().postSend(SendWr.write(1, List.of(new Sge(p.src().addr(), 5, p.src().lkey())), p.dst().addr(),
            p.dst().rkey()));
        assertThat(p.rig().pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
        assertThat(p.rig().processB().read(p.dst().addr(), 5)).isEqualTo("hello".getBytes(StandardCharsets.US_ASCII));
    }
}
