package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import org.junit.jupiter.api.Test;

/**
 * A range whose end passes 2^64 is written as what it is ({@link AddressRangeText}), never as an end below its start:
 * an RDMA WRITE of 64 bytes at remote_addr 0xffffffffffffffe0 is out of every MR's range, and its diagnosis says the
 * range wraps.
 */
class WrappedRangeTextTest
{
    @Test
    void aRangeIsWrittenStartInclusiveEndExclusiveAndAWrappedOneSaysItWraps()
    {
        assertThat(AddressRangeText.of(0x1000, 0x40)).isEqualTo("[0x1000, 0x1040)");
        assertThat(AddressRangeText.of(0xffffffffffffffe0L, 64))
            .isEqualTo("addr 0xffffffffffffffe0 + 64 bytes wraps past 2^64");
        assertThat(AddressRangeText.of(0xffffffffffffffc0L, 64)).isEqualTo("[0xffffffffffffffc0, 2^64)");
        assertThat(AddressRangeText.of(0x10, -1L)).isEqualTo("addr 0x10 + 18446744073709551615 bytes wraps past 2^64");
        assertThat(AddressRangeText.wraps(0xffffffffffffffc0L, 64)).isFalse();
        assertThat(AddressRangeText.wraps(0xffffffffffffffc1L, 64)).isTrue();
    }

    @Test
    void anRdmaWriteWhoseRangeWrapsPast2To64IsDiagnosedAsWrappingNotAsASmallEnd()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
        k.rig.processA().write(k.scratch, RuleRig.pattern(64, 1));

        final WorkCompletion wc = k.post(k.pair().a(), SendWr.write(k.nextWrId(),
            RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch, 64)), 0xffffffffffffffe0L, mr.rkey()));

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        final WcDiagnosis d = wc.diagnosis();
        assertThat(d.check()).isEqualTo(WcDiagnosis.Check.RANGE);
        assertThat(d.summary()).contains("asked addr 0xffffffffffffffe0 + 64 bytes wraps past 2^64")
            .contains("it wraps past 2^64, so no registered range holds it")
            .doesNotContain("0x20)");
        assertThat(d.details()).anyMatch(l -> l.startsWith("asked: addr 0xffffffffffffffe0 + 64 bytes wraps past "
            + "2^64, rights [REMOTE_WRITE]"));
    }
}
