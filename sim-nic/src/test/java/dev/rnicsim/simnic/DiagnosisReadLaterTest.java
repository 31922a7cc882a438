package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.AsyncEvent;
import dev.rnicsim.verbs.AsyncEventType;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A refused access's words are made when first read, from what was taken at the failure: read after the device
 * changed (the MRs gone, another origin set), they are the words read right away on a twin fabric that changed
 * nothing. The summary, the details, the first error a flush quotes and the responder's async event all agree.
 */
class DiagnosisReadLaterTest
{
    /** What one run shows: the failed write's diagnosis, the flushed one's, and the responder's event. */
    private record Seen(WorkCompletion refused, WorkCompletion flushed, AsyncEvent event, int coveringRkey)
    {
    }

    /**
     * On a fresh pair: MR {@code small} (8 bytes registered), MR {@code whole} covering the range; a WRITE of 16
     * bytes through small's rkey, posted with an origin, then a second WRITE that the QP's error flushes.
     */
    private static Seen run(final boolean readRightAway)
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion small = k.rig.pdB.regMr(buf, 8, RuleRig.REMOTE_ALL);
        final MemoryRegion whole = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
        final KeyRig.Pair p = k.pair();
        k.rig.processA().write(k.scratch, RuleRig.pattern(16, 1));
        k.rig.fabric.origin("app.java:12 (write)");
        p.a().postSend(List.of(SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch, 16)), buf,
            small.rkey()), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch, 8)), buf,
            whole.rkey())));
        final List<WorkCompletion> all = k.drain();
        final WorkCompletion refused = all.stream().filter(w -> w.status() == WcStatus.REM_ACCESS_ERR).findFirst()
            .orElseThrow();
        final WorkCompletion flushed = all.stream().filter(w -> w.status() == WcStatus.WR_FLUSH_ERR).findFirst()
            .orElseThrow();
        if (readRightAway)
        {
            refused.diagnosis().text();
            flushed.diagnosis().text();
        }
        else
        {
            // Everything the words name changes before anyone reads them.
            k.rig.fabric.origin("app.java:99 (teardown)");
            small.close();
            whole.close();
        }
        final AsyncEvent event = k.rig.ctxB.getAsyncEvent().orElseThrow();
        return new Seen(refused, flushed, event, whole.rkey());
    }

    @Test
    void wordsReadAfterTheDeviceChangedShouldBeTheWordsReadRightAway()
    {
        final Seen now = run(true);
        final Seen later = run(false);

        final WcDiagnosis d = later.refused().diagnosis();
        assertThat(d.check()).isEqualTo(WcDiagnosis.Check.RANGE);
        assertThat(d.summary()).isEqualTo(now.refused().diagnosis().summary())
            .contains("(app.java:12 (write))").contains("asked [0x").contains("8 bytes past its end");
        assertThat(d.details()).isEqualTo(now.refused().diagnosis().details());
        assertThat(d.details().get(d.details().size() - 1)).contains("rkey " + dev.rnicsim.mtt.MKey.toHex(
            later.coveringRkey()) + " of the MR of 8192 bytes");
        assertThat(later.flushed().diagnosis().summary()).isEqualTo(now.flushed().diagnosis().summary())
            .contains("is in ERR since wr_id");
        assertThat(later.event().type()).isEqualTo(now.event().type()).isEqualTo(AsyncEventType.QP_ACCESS_ERR);
        assertThat(later.event().cause()).isEqualTo(now.event().cause()).contains(d.summary());
    }
}
