package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The engine builds a work request's trace arguments only for a trace listener: with none, the simulated clock, the
 * completions and the placed bytes are exactly those of a traced run; with one, every WRITE's span carries its
 * arguments and the responder's overlap span is reported.
 */
class TraceOffTest
{
    private static final int SMALL_BYTES = 64;
    private static final int LARGE_BYTES = 1 << 20;

    /** What one run of a 64-byte and a 1 MiB WRITE leaves: the clock, the completions, the target's bytes. */
    private record Run(long clockNs, List<WorkCompletion> completions, byte[] target)
    {
    }

    private static Run run(final List<TraceEvent> trace)
    {
        final RuleRig rig = RuleRig.connected();
        if (trace != null)
        {
            rig.fabric.addTraceListener(trace::add);
        }
        final long src = rig.bufferA(LARGE_BYTES);
        final long dst = rig.bufferB(LARGE_BYTES);
        final byte[] pattern = new byte[LARGE_BYTES];
        for (int i = 0; i < pattern.length; i++)
        {
            pattern[i] = (byte)(1 + i % 251);
        }
        rig.ctxA.memory().write(src, pattern);
        final MemoryRegion srcMr = rig.pdA.regMr(src, LARGE_BYTES, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, LARGE_BYTES, RuleRig.REMOTE_ALL);
        final List<WorkCompletion> completions = new ArrayList<>();
        rig.qpA.postSend(SendWr.write(1, List.of(new Sge(src, SMALL_BYTES, srcMr.lkey())), dst, dstMr.rkey()));
        completions.addAll(rig.pollA());
        rig.qpA.postSend(SendWr.write(2, List.of(new Sge(src, LARGE_BYTES, srcMr.lkey())), dst, dstMr.rkey()));
        completions.addAll(rig.pollA());
        return new Run(rig.fabric.clock().nowNs(), completions, rig.ctxB.memory().read(dst, LARGE_BYTES));
    }

    @Test
    void shouldAdvanceTheClockAndCompleteAlikeWithAndWithoutATraceListener()
    {
        final List<TraceEvent> trace = new ArrayList<>();

        final Run traced = run(trace);
        final Run untraced = run(null);

        assertThat(traced.completions()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS,
            WcStatus.SUCCESS);
        assertThat(untraced.completions()).isEqualTo(traced.completions());
        assertThat(untraced.clockNs()).isPositive().isEqualTo(traced.clockNs());
        assertThat(untraced.target()).isEqualTo(traced.target());
        final List<TraceEvent> writes = trace.stream().filter(e -> e.name().equals("RDMA_WRITE")).toList();
        assertThat(writes).hasSize(2);
        assertThat(writes).allSatisfy(e -> assertThat(e.args()).containsKeys("qp_num", "bytes", "cache_misses")
            .containsEntry("status", "IBV_WC_SUCCESS"));
        assertThat(writes).extracting(e -> ((Number)e.args().get("bytes")).longValue())
            .containsExactly((long)SMALL_BYTES, (long)LARGE_BYTES);
        assertThat(trace).filteredOn(e -> e.name().equals("RDMA_WRITE (responder)")).hasSize(2);
    }
}
