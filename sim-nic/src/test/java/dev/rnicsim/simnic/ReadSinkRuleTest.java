package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.AsyncEventType;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link ReadSinkRule}: on cxgb4 (iWARP) the sink of an RDMA READ must grant REMOTE_WRITE, else the READ completes with
 * IBV_WC_LOC_ACCESS_ERR and IBV_EVENT_QP_ACCESS_ERR is raised; InfiniBand and RoCE devices take a LOCAL_WRITE sink.
 */
class ReadSinkRuleTest
{
    /** @return the completion of a 15-byte READ from b into a sink of A registered with the rights given. */
    private static WorkCompletion readInto(final RuleRig rig, final Set<Access> sinkRights)
    {
        return readInto(rig, sinkRights, 15);
    }

    /** @return the completion of a READ of {@code bytes} from b into a sink of A registered with the rights given. */
    private static WorkCompletion readInto(final RuleRig rig, final Set<Access> sinkRights, final int bytes)
    {
        final long data = rig.bufferB(4096);
        final MemoryRegion mrB = rig.pdB.regMr(data, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        final long sink = rig.bufferA(4096);
        final MemoryRegion mrA = rig.pdA.regMr(sink, 4096, sinkRights);
        rig.qpA.postSend(SendWr.read(7, List.of(new Sge(sink, bytes, mrA.lkey())), data, mrB.rkey()));
        return rig.pollA().getFirst();
    }

    @Test
    void cxgb4RefusesASinkWithoutRemoteWriteWithALocalAccessErrorAndAnEvent()
    {
        final RuleRig rig = RuleRig.connected(DriverProfiles.cxgb4(), RuleRig.ALL_REMOTE);

        final WorkCompletion wc = readInto(rig, RuleRig.LOCAL);

        assertThat(wc.status()).isEqualTo(WcStatus.LOC_ACCESS_ERR);
        assertThat(wc.diagnosis().summary()).contains("sink of the RDMA READ").contains("must grant REMOTE_WRITE")
            .contains("T4_ERR_ACCESS");
        assertThat(wc.diagnosis().details()).anyMatch(d -> d.contains("fix: register the READ's sink with "
            + "LOCAL_WRITE and REMOTE_WRITE"));
        assertThat(rig.qpA.state()).isEqualTo(QpState.ERR);
        assertThat(((SimContext)rig.ctxA).events().pending()).extracting(AsyncEvent::type)
            .contains(AsyncEventType.QP_ACCESS_ERR);
    }

    @Test
    void cxgb4TakesAZeroLengthReadIntoALocalWriteSinkAsItNamesNoSinkStag()
    {
        // iw_cxgb4 build_rdma_read: a zero-length READ names the reserved STag 2 as source and sink, plen 0
        final RuleRig rig = RuleRig.connected(DriverProfiles.cxgb4(), RuleRig.ALL_REMOTE);

        final WorkCompletion wc = readInto(rig, RuleRig.LOCAL, 0);

        assertThat(wc.status()).isEqualTo(WcStatus.SUCCESS);
        assertThat(wc.byteLen()).isZero();
        assertThat(rig.qpA.state()).isEqualTo(QpState.RTS);
        assertThat(((SimContext)rig.ctxA).events().pending()).extracting(AsyncEvent::type)
            .doesNotContain(AsyncEventType.QP_ACCESS_ERR);
    }

    @Test
    void cxgb4ReadsIntoASinkWithRemoteWrite()
    {
        final RuleRig rig = RuleRig.connected(DriverProfiles.cxgb4(), RuleRig.ALL_REMOTE);

        assertThat(readInto(rig, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)).status())
            .isEqualTo(WcStatus.SUCCESS);
    }

    @Test
    void theRespondersRefusalComesFirstAsNoResponseReachesTheSink()
    {
        final RuleRig rig = RuleRig.connected(DriverProfiles.cxgb4(), RuleRig.ALL_REMOTE);
        final long data = rig.bufferB(4096);
        final MemoryRegion noRead = rig.pdB.regMr(data, 4096, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        final long sink = rig.bufferA(4096);
        final MemoryRegion mrA = rig.pdA.regMr(sink, 4096, RuleRig.LOCAL);

        rig.qpA.postSend(SendWr.read(1, List.of(new Sge(sink, 15, mrA.lkey())), data, noRead.rkey()));

        assertThat(rig.pollA().getFirst().status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
    }

    @Test
    void roceTakesALocalWriteSink()
    {
        final RuleRig rig = RuleRig.connected();

        assertThat(readInto(rig, RuleRig.LOCAL).status()).isEqualTo(WcStatus.SUCCESS);
    }
}
