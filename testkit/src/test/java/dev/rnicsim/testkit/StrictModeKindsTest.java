package dev.rnicsim.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.testkit.Violation.Kind;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The kinds the testkit's strict mode reports once enabled, and failure messages that carry the diagnosis.
 */
class StrictModeKindsTest
{
    private static final long LEN = 64 << 10;

    @Test
    void unusedMrIsReportedOnlyOnceEnabled()
    {
        final TestNic nic = TestNic.builder().start();
        final StrictMode strict = nic.strict();
        final long buf = nic.alloc(Side.A, LEN);
        nic.reg(Side.A, buf, 4096, Access.LOCAL_WRITE).close();
        assertThat(strict.violations()).isEmpty();

        strict.enable(Kind.UNUSED_MR);
        nic.reg(Side.A, buf, 4096, Access.LOCAL_WRITE).close();

        assertThat(strict.violations()).extracting(Violation::kind).containsExactly(Kind.UNUSED_MR);
        assertThat(strict.violations().get(0).message()).contains("saw no DMA before it was deregistered");
        assertThat(strict.violations().get(0).report()).contains("registered at:")
            .contains("StrictModeKindsTest.unusedMrIsReportedOnlyOnceEnabled");
        strict.clear();
        nic.close();
    }

    @Test
    void recycledKeyReachingANewMrIsReportedOnceEnabled()
    {
        // ConnectX-5 recycles keys; with max_mr=2 a freed index is the only one left to reuse.
        final dev.rnicsim.simnic.DeviceProfile cx5 = dev.rnicsim.simnic.DeviceProfiles.connectx5();
        final TestNic nic = TestNic.builder().profile(cx5.withAttributes(cx5.attributes().toBuilder().maxMr(2)
            .build())).start();
        final StrictMode strict = nic.strict().enable(Kind.STALE_KEY_REUSED);
        final long src = nic.alloc(Side.A, LEN);
        final long dst = nic.alloc(Side.B, LEN);
        nic.cpuWrite(Side.A, src, "payload".getBytes(StandardCharsets.US_ASCII));
        final MemoryRegion ms = nic.reg(Side.A, src, LEN, Access.LOCAL_WRITE);
        final MemoryRegion filler = nic.reg(Side.B, dst + 8192, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        assertThat(nic.write(ms, src, 7, dst + 8192, filler.rkey()).ok()).isTrue();
        final MemoryRegion first = nic.reg(Side.B, dst, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        assertThat(nic.write(ms, src, 7, dst, first.rkey()).ok()).isTrue();
        first.close();
        final MemoryRegion second = nic.reg(Side.B, dst + 4096, 4096, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        assertThat(second.rkey()).as("the recycled key").isEqualTo(first.rkey());

        assertThat(nic.write(ms, src, 7, dst + 4096, first.rkey()).ok()).isTrue();

        assertThat(strict.violations()).extracting(Violation::kind).containsExactly(Kind.STALE_KEY_REUSED);
        assertThat(strict.violations().get(0).message()).contains("the same key named the MR of 4096 bytes");
        strict.clear();
        ms.close();
        second.close();
        filler.close();
        nic.close();
    }

    @Test
    void assertOkShouldFailWithTheDiagnosis()
    {
        final TestNic nic = TestNic.builder().start();
        final StrictMode strict = nic.strict();
        final long src = nic.alloc(Side.A, LEN);
        final long dst = nic.alloc(Side.B, LEN);
        final MemoryRegion ms = nic.reg(Side.A, src, LEN, Access.LOCAL_WRITE);
        final MemoryRegion md = nic.reg(Side.B, dst, 4096, Access.LOCAL_WRITE, Access.REMOTE_READ);

        final WorkCompletion wc = nic.write(ms, src, 8, dst, md.rkey());

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThatThrownBy(() -> TestNic.assertOk(wc)).isInstanceOf(AssertionError.class)
            .hasMessageContaining("got IBV_WC_REM_ACCESS_ERR (vendor_err 0x13)")
            .hasMessageContaining("lacks [REMOTE_WRITE]: asked [REMOTE_WRITE], granted [LOCAL_WRITE, REMOTE_READ]")
            .hasMessageContaining("check RIGHTS");
        assertThat(TestNic.assertOk(nic.read(ms, src, 8, dst, md.rkey()))).matches(WorkCompletion::ok);
        strict.clear();
        ms.close();
        md.close();
        nic.close();
    }
}
