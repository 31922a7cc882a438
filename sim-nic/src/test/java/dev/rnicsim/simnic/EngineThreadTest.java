package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The engine-thread mode: the engine runs on its own thread while one thread of the program posts and another
 * polls. Whatever the interleaving, the completions come in posting order and every byte lands.
 */
class EngineThreadTest
{
    private static final int MTU = SimQp.PATH_MTU_BYTES;
    /** WRITEs posted: the default max_send_wr, so the poster never finds the send queue full. */
    private static final int WRITES = 64;
    /** Each WRITE: three packets. */
    private static final int BYTES = 3 * MTU;
    /** How long a stuck thread is waited for before the test fails instead of hanging (not a speed check). */
    private static final Duration HANG_GUARD = Duration.ofMinutes(2);

    @Test
    void writesPostedFromOneThreadCompleteInOrderForAnotherThreadPolling() throws InterruptedException
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA((long)WRITES * BYTES);
        final byte[] data = RuleRig.pattern(WRITES * BYTES, 3);
        rig.ctxA.memory().write(src, data);
        final MemoryRegion srcMr = rig.pdA.regMr(src, (long)WRITES * BYTES, RuleRig.LOCAL);
        final long dst = rig.bufferB((long)WRITES * BYTES);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, (long)WRITES * BYTES, RuleRig.REMOTE_ALL);
        final List<WorkCompletion> polled = new ArrayList<>();
        final AtomicReference<Throwable> failed = new AtomicReference<>();

        try (EngineThread engine = rig.fabric.startEngineThread())
        {
            assertThat(rig.fabric.engineThreadRunning()).isTrue();
            final Thread poster = Thread.ofPlatform().name("poster").start(() -> guard(failed, () ->
            {
                for (int i = 0; i < WRITES; i++)
                {
                    final long at = (long)i * BYTES;
                    rig.qpA.postSend(SendWr.write(i, sgl(sge(srcMr, src + at, BYTES)), dst + at, dstMr.rkey()));
                }
            }));
            final Thread poller = Thread.ofPlatform().name("poller").start(() -> guard(failed, () ->
            {
                while (polled.size() < WRITES && failed.get() == null)
                {
                    final List<WorkCompletion> got = rig.cqA.poll(WRITES);
                    if (got.isEmpty())
                    {
                        // Nothing posted yet, or the engine is idle: the poster has not caught up.
                        Thread.onSpinWait();
                    }
                    polled.addAll(got);
                }
            }));
            assertThat(poster.join(HANG_GUARD)).as("the poster finished").isTrue();
            assertThat(poller.join(HANG_GUARD)).as("the poller got every completion").isTrue();
            assertThat(failed.get()).isNull();
            assertThat(engine.packetsMoved()).as("the engine thread moved the packets").isEqualTo(3L * WRITES);
        }

        assertThat(rig.fabric.engineThreadRunning()).isFalse();
        assertThat(polled).extracting(WorkCompletion::status).containsOnly(WcStatus.SUCCESS);
        assertThat(polled).extracting(WorkCompletion::wrId).containsExactlyElementsOf(
            java.util.stream.LongStream.range(0, WRITES).boxed().toList());
        assertThat(rig.ctxB.memory().read(dst, WRITES * BYTES)).isEqualTo(data);
    }

    @Test
    void aPollWithNothingInFlightReturnsAtOnceAndTheFabricGoesBackToTheDeterministicMode()
    {
        final RuleRig rig = RuleRig.connected();
        try (EngineThread ignored = rig.fabric.startEngineThread())
        {
            assertThat(rig.cqA.poll(1)).isEmpty();
            assertThatThrownBy(rig.fabric::startEngineThread).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already runs");
        }
        final long src = rig.bufferA(MTU);
        final MemoryRegion srcMr = rig.pdA.regMr(src, MTU, RuleRig.LOCAL);
        final long dst = rig.bufferB(MTU);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, MTU, RuleRig.REMOTE_ALL);
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, MTU)), dst, dstMr.rkey()));

        assertThat(rig.fabric.engine().idle()).as("no thread moves it now").isFalse();
        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
    }

    private static void guard(final AtomicReference<Throwable> failed, final Runnable body)
    {
        try
        {
            body.run();
        }
        catch (final Throwable t)
        {
            failed.compareAndSet(null, t);
        }
    }
}
