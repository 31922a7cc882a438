package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.Violation.Kind;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One example of each violation strict mode reports, and correct use that it leaves alone.
 */
class StrictModeTest
{
    private static final long LEN = 64 << 10;

    /** A fixture with a source MR on side A and a remotely writable target MR on side B. */
    private static final class Rig implements AutoCloseable
    {
        final TestNic nic;
        final StrictMode strict;
        final long src;
        final long dst;
        final MemoryRegion ms;
        MemoryRegion md;

        Rig(final TestNic.Builder builder)
        {
            nic = builder.start();
            strict = nic.strict();
            src = nic.alloc(Side.A, LEN);
            dst = nic.alloc(Side.B, LEN);
            nic.cpuWrite(Side.A, src, "payload".getBytes(StandardCharsets.US_ASCII));
            ms = nic.reg(Side.A, src, LEN, Access.LOCAL_WRITE);
            md = nic.reg(Side.B, dst, LEN, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        }

        Rig()
        {
            this(TestNic.builder());
        }

        WorkCompletion write()
        {
            return nic.write(ms, src, 7, dst, md.rkey());
        }

        /** Deregisters what is left and closes; strict mode's violations are thrown. */
        @Override
        public void close()
        {
            ms.close();
            md.close();
            nic.close();
        }
    }

    private static Violation only(final StrictMode strict, final Kind kind)
    {
        assertThat(strict.violations()).extracting(Violation::kind).containsExactly(kind);
        return strict.violations().get(0);
    }

    @Test
    void staleLkeyIsReportedWithWhereTheMrWasRegisteredAndDeregistered()
    {
        final Rig rig = new Rig();
        final MemoryRegion tmp = rig.nic.reg(Side.A, rig.src, 4096, Access.LOCAL_WRITE);
        final int stale = tmp.lkey();
        tmp.close();
        final WorkCompletion wc = rig.nic.post(Side.A, dev.rnicsim.verbs.SendWr.write(rig.nic.nextWrId(), List.of(
            new dev.rnicsim.verbs.Sge(rig.src, 16, stale)), rig.dst, rig.md.rkey()));
        assertThat(wc.status()).isEqualTo(WcStatus.LOC_PROT_ERR);
        final Violation v = only(rig.strict, Kind.STALE_LKEY);
        assertThat(v.message()).contains("lkey 0x" + Integer.toHexString(stale)).contains("deregistered")
            .containsPattern("of process \\d+ on \\S+").contains("use the lkey of a live MR");
        assertThat(v.report()).contains("registered at:").contains("released at:")
            .contains("StrictModeTest.staleLkeyIsReportedWithWhereTheMrWasRegisteredAndDeregistered");
        rig.strict.clear();
        rig.close();
    }

    @Test
    void staleRkeyIsReported()
    {
        final Rig rig = new Rig();
        final int stale = rig.md.rkey();
        rig.md.close();
        assertThat(rig.nic.write(rig.ms, rig.src, 7, rig.dst, stale).status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        final Violation v = only(rig.strict, Kind.STALE_RKEY);
        assertThat(v.message()).contains("rkey 0x" + Integer.toHexString(stale)).contains("sim:b/connectx5");
        assertThat(v.releasedAt()).isNotNull();
        rig.strict.clear();
        rig.close();
    }

    @Test
    void dmaAfterMunmapIsAStaleMapping()
    {
        final Rig rig = new Rig();
        rig.nic.munmap(Side.B, rig.dst, LEN);
        assertThat(rig.write().ok()).as("the NIC still reaches the pinned frames").isTrue();
        final Violation v = only(rig.strict, Kind.STALE_MAPPING);
        assertThat(v.message()).contains("no longer mapped").contains("remote");
        assertThat(v.report()).contains("StrictModeTest$Rig.<init>").doesNotContain("at dev.rnicsim.simnic");
        rig.strict.clear();
        rig.close();
    }

    @Test
    void dmaAfterMunmapAndMmapAtTheSameAddressIsAStaleMapping()
    {
        final Rig rig = new Rig();
        rig.nic.remap(Side.B, rig.dst, LEN);
        rig.nic.cpuWrite(Side.B, rig.dst, new byte[] {9});
        assertThat(rig.write().ok()).isTrue();
        assertThat(only(rig.strict, Kind.STALE_MAPPING).message()).contains("now backed by frame");
        assertThat(rig.nic.cpuRead(Side.B, rig.dst, 7)).as("the application never sees the data")
            .isNotEqualTo("payload".getBytes(StandardCharsets.US_ASCII));
        rig.strict.clear();
        rig.close();
    }

    @Test
    void writeFromTheParentAfterALegacyForkIsAStaleMapping()
    {
        final Rig rig = new Rig(TestNic.builder().forkBehaviour(ForkBehaviour.LEGACY));
        rig.nic.cpuWrite(Side.B, rig.dst, new byte[] {1});
        rig.nic.fork(Side.B);
        rig.nic.cpuWrite(Side.B, rig.dst, new byte[] {2});
        assertThat(rig.write().ok()).isTrue();
        assertThat(only(rig.strict, Kind.STALE_MAPPING).message()).contains("a copy-on-write after fork")
            .contains("call ibv_fork_init()");
        rig.strict.clear();
        rig.close();
    }

    @Test
    void legacyForkWithDontforkAndModernForkAreClean()
    {
        try (Rig rig = new Rig(TestNic.builder().forkBehaviour(ForkBehaviour.LEGACY)))
        {
            rig.nic.process(Side.B).madvise(rig.dst, LEN, Madvice.DONTFORK);
            rig.nic.fork(Side.B);
            rig.nic.cpuWrite(Side.B, rig.dst, new byte[] {2});
            assertThat(rig.write().ok()).isTrue();
            rig.strict.assertClean();
        }
        try (Rig rig = new Rig(TestNic.builder().forkBehaviour(ForkBehaviour.MODERN)))
        {
            rig.nic.fork(Side.B);
            rig.nic.cpuWrite(Side.B, rig.dst, new byte[] {2});
            assertThat(rig.write().ok()).isTrue();
            assertThat(rig.nic.cpuRead(Side.B, rig.dst, 7)).isEqualTo("payload".getBytes(StandardCharsets.US_ASCII));
        }
    }

    @Test
    void mrStillRegisteredWhenTheContextClosesIsALeak()
    {
        final Rig rig = new Rig();
        final MemoryRegion leaked = rig.nic.reg(Side.B, rig.dst, 4096, Access.LOCAL_WRITE);
        rig.ms.close();
        rig.md.close();
        assertThatThrownBy(rig.nic::close).isInstanceOf(AssertionError.class)
            .hasMessageContaining("strict mode: 1 violation")
            .hasMessageContaining("LEAKED_MR: MR lkey 0x" + Integer.toHexString(leaked.lkey()) + " of 4096 bytes")
            .hasMessageContaining("StrictModeTest.mrStillRegisteredWhenTheContextClosesIsALeak");
        assertThat(leaked.isClosed()).as("closing the context deregistered it").isTrue();
    }

    @Test
    void registrationInAHotLoopIsReported()
    {
        final Rig rig = new Rig();
        rig.strict.maxRegistrationsPerSecond(1000);
        for (int i = 0; i < StrictMode.HOT_WINDOW; i++)
        {
            rig.nic.reg(Side.A, rig.src, 4096, Access.LOCAL_WRITE).close();
        }
        final Violation v = only(rig.strict, Kind.HOT_REGISTRATION);
        assertThat(v.message()).contains("100 registrations on sim:a/connectx5").contains("> the 1000 allowed");
        rig.strict.clear();
        rig.close();
    }

    @Test
    void correctUseIsClean()
    {
        try (Rig rig = new Rig())
        {
            rig.strict.maxRegistrationsPerSecond(1000);
            assertThat(rig.write().ok()).isTrue();
            // Free the memory the right way: deregister, unmap, map again, register again.
            rig.md.close();
            rig.nic.remap(Side.B, rig.dst, LEN);
            rig.md = rig.nic.reg(Side.B, rig.dst, LEN, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
            assertThat(rig.write().ok()).isTrue();
            assertThat(rig.nic.cpuRead(Side.B, rig.dst, 7)).isEqualTo("payload".getBytes(StandardCharsets.US_ASCII));
            // A READ and a SEND.
            assertThat(rig.nic.read(rig.ms, rig.src + 4096, 7, rig.dst, rig.md.rkey()).ok()).isTrue();
            final WorkCompletion sent = rig.nic.send(rig.ms, rig.src, 7, rig.md, rig.dst + 100, 64);
            assertThat(sent.ok()).isTrue();
            assertThat(rig.nic.lastReceive().byteLen()).isEqualTo(7);
            // 200 registrations, one every 2 ms of simulated time: 500 per second, under the limit.
            for (int i = 0; i < 2 * StrictMode.HOT_WINDOW; i++)
            {
                rig.nic.advanceClock(2_000_000);
                rig.nic.reg(Side.A, rig.src, 4096, Access.LOCAL_WRITE).close();
            }
            rig.strict.assertClean();
        }
    }

    @Test
    void refusedWorkRequestsAreOutcomesAndTheFixtureReconnects()
    {
        try (Rig rig = new Rig())
        {
            final WorkCompletion wc = rig.nic.write(rig.ms, rig.src, 16, rig.dst + LEN - 8, rig.md.rkey());
            assertThat(wc.status()).as("one page past the MR").isEqualTo(WcStatus.REM_ACCESS_ERR);
            assertThat(rig.write().ok()).isTrue();
            assertThat(rig.nic.reconnects()).isEqualTo(1);
            rig.strict.assertClean();
        }
    }

    @Test
    void readOnlyMrOverUntouchedMemoryStaysOnItsPagesWhenTheCpuWritesLater()
    {
        try (Rig rig = new Rig())
        {
            final long fresh = rig.nic.alloc(Side.B, 8192);
            final MemoryRegion ro = rig.nic.reg(Side.B, fresh, 8192, Access.REMOTE_READ);
            rig.nic.cpuWrite(Side.B, fresh, "cpu".getBytes(StandardCharsets.US_ASCII));
            assertThat(rig.nic.read(rig.ms, rig.src + 8192, 3, fresh, ro.rkey()).ok()).isTrue();
            assertThat(rig.nic.cpuRead(Side.A, rig.src + 8192, 3)).isEqualTo("cpu".getBytes(
                StandardCharsets.US_ASCII));
            ro.close();
            rig.strict.assertClean();
        }
    }

    @Test
    void ignoredKindsAreNotRecorded()
    {
        final Rig rig = new Rig();
        rig.strict.ignore(Kind.STALE_RKEY);
        final int stale = rig.md.rkey();
        rig.md.close();
        rig.nic.write(rig.ms, rig.src, 7, rig.dst, stale);
        assertThat(rig.strict.violations()).isEmpty();
        rig.close();
    }

    @Test
    void theFixturePrintsItsScript()
    {
        try (TestNic nic = TestNic.start())
        {
            assertThat(nic.script()).startsWith("host a memlock=unlimited fork=modern\n")
                .contains("device nic_b b profile=connectx5\n").contains("qp qp_b pd_b cq_b\n")
                .endsWith("connect qp_a qp_b access=rw,rr,ra\n");
        }
    }
}
