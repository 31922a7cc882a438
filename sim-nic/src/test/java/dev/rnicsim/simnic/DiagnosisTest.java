package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcDiagnosis;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * The Java side of diagnoses: {@link WorkCompletion#diagnosis()} and {@code vendor_err} per driver, the key history
 * without a script (verb names and event numbers), the origin a caller sets, and nothing on successes.
 */
class DiagnosisTest
{
    private static WorkCompletion writeWith(final KeyRig k, final int rkey, final long remoteAddr)
    {
        k.rig.processA().write(k.scratch, RuleRig.pattern(8, 1));
        return k.post(k.pair().a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch, 8)),
            remoteAddr, rkey));
    }

    @Test
    void deregisteredRkeyShouldGiveTheMlx5SyndromeAndNameTheVerbsThatFreedTheIndex()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
        final int rkey = mr.rkey();
        mr.close();

        final WorkCompletion wc = writeWith(k, rkey, buf);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.vendorErr()).isEqualTo(0x13);
        final WcDiagnosis d = wc.diagnosis();
        assertThat(d.check()).isEqualTo(WcDiagnosis.Check.KEY_INDEX);
        assertThat(d.key()).isEqualTo(rkey);
        assertThat(d.mptIndex()).isEqualTo(rkey >>> 8);
        assertThat(d.variant()).isEqualTo(rkey & 0xff);
        assertThat(d.syndromeName()).isEqualTo("MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR (0x13)");
        assertThat(d.summary()).contains("holds nothing now").contains("registered by ibv_reg_mr (key event #")
            .contains("deregistered by ibv_dereg_mr (key event #");
    }

    @Test
    void wordsReadLaterShouldTellWhatTheDeviceHeldAtTheFailure()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        final WorkCompletion wc = writeWith(k, mr.rkey(), buf);

        // The MR goes away (its entry, its index's history) before anyone reads the diagnosis.
        mr.close();

        final WcDiagnosis d = wc.diagnosis();
        assertThat(d.check()).isEqualTo(WcDiagnosis.Check.RIGHTS);
        assertThat(d.summary()).contains("granted [LOCAL_WRITE, REMOTE_READ]");
        assertThat(d.details()).anyMatch(l -> l.startsWith("registered: [0x"));
        assertThat(d.details()).filteredOn(l -> l.startsWith("history of index")).hasSize(1)
            .allMatch(l -> l.contains("registered by ibv_reg_mr"));
        assertThat(d.text()).isEqualTo(wc.diagnosis().text());
        assertThat(d.withSyndrome(0x12).summary()).isEqualTo(d.summary());
        assertThat(d.withSyndrome(0x12).syndrome()).isEqualTo(0x12);
    }

    @Test
    void originSetOnTheFabricShouldNameWhereTheKeyWasFreed()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(8192);
        k.rig.fabric.origin("app.java:41 (register)");
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
        k.rig.fabric.origin("app.java:57 (release)");
        mr.close();
        k.rig.fabric.origin(null);

        final WorkCompletion wc = writeWith(k, mr.rkey(), buf);

        assertThat(wc.diagnosis().summary()).contains("registered at app.java:41 (register), then deregistered at "
            + "app.java:57 (release)");
    }

    @Test
    void softRoceShouldLeaveVendorErrZeroAndStillDiagnoseTheMissingRight()
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.byName("rxe"));
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));

        final WorkCompletion wc = writeWith(k, mr.rkey(), buf);

        assertThat(wc.status()).isEqualTo(WcStatus.REM_ACCESS_ERR);
        assertThat(wc.vendorErr()).isZero();
        assertThat(wc.diagnosis().check()).isEqualTo(WcDiagnosis.Check.RIGHTS);
        assertThat(wc.diagnosis().summary()).contains("lacks [REMOTE_WRITE]: asked [REMOTE_WRITE], granted "
            + "[LOCAL_WRITE, REMOTE_READ]");
        // rxe gives no CQE syndrome: no MLX5_CQE_SYNDROME_* line, and the diagnosis says what rxe reports instead
        assertThat(wc.diagnosis().syndrome()).isZero();
        assertThat(wc.diagnosis().text()).doesNotContain("MLX5_CQE_SYNDROME").doesNotContain("syndrome 0x")
            .contains("\ncheck RIGHTS\n")
            .contains("vendor_err 0: rxe reports the status only, with no CQE syndrome");
    }

    @Test
    void theSyndromeShouldBeAPropertyOfTheProfile()
    {
        final KeyRig k = KeyRig.of(DeviceProfiles.connectx5().withProviderRules(java.util.EnumSet.complementOf(
            java.util.EnumSet.of(ProviderRule.VENDOR_ERR_CQE_SYNDROME)).stream()
            .filter(DeviceProfiles.connectx5().providerRules()::contains)
            .collect(java.util.stream.Collectors.toSet())));
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));

        final WorkCompletion wc = writeWith(k, mr.rkey(), buf);

        assertThat(DeviceProfiles.connectx5().follows(ProviderRule.VENDOR_ERR_CQE_SYNDROME)).isTrue();
        assertThat(DeviceProfiles.connectx3().follows(ProviderRule.VENDOR_ERR_CQE_SYNDROME)).isTrue();
        assertThat(DeviceProfiles.byName("rxe").follows(ProviderRule.VENDOR_ERR_CQE_SYNDROME)).isFalse();
        assertThat(wc.vendorErr()).isZero();
        assertThat(wc.diagnosis().text()).doesNotContain("MLX5_CQE_SYNDROME").contains("vendor_err 0: mlx5 reports");
    }

    @Test
    void successShouldCarryNoDiagnosisAndFlushesShouldNameTheFirstError()
    {
        final KeyRig k = KeyRig.connectx5();
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
        final KeyRig.Pair p = k.pair();
        final WorkCompletion ok = k.post(p.a(), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr,
            k.scratch, 8)), buf, mr.rkey()));

        assertThat(ok.ok()).isTrue();
        assertThat(ok.diagnosis()).isNull();
        assertThat(ok.vendorErr()).isZero();

        p.a().postSend(java.util.List.of(SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch,
            8)), buf + 8192, mr.rkey()), SendWr.write(k.nextWrId(), RuleRig.sgl(RuleRig.sge(k.scratchMr, k.scratch,
            8)), buf, mr.rkey())));
        final java.util.List<WorkCompletion> all = k.drain();
        final WorkCompletion flushed = all.stream().filter(w -> w.status() == WcStatus.WR_FLUSH_ERR).findFirst()
            .orElseThrow();

        assertThat(flushed.vendorErr()).isEqualTo(0x05);
        assertThat(flushed.diagnosis().check()).isEqualTo(WcDiagnosis.Check.FLUSHED);
        assertThat(flushed.diagnosis().summary()).contains("is in ERR since wr_id").contains(
            "completed with IBV_WC_REM_ACCESS_ERR").contains("asked [");
    }

    @Test
    void keyHistoryShouldKeepTheLastEventsOfAnIndex()
    {
        // max_mr=1: every registration on b takes the one index there is.
        final KeyRig k = KeyRig.of(KeyRig.with(DeviceProfiles.connectx5(), b -> b.maxMr(1)));
        final long buf = k.rig.bufferB(8192);
        final MemoryRegion mr = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
        final KeyHistory h = k.deviceB().keyHistory();
        final long index = h.index(mr.lkey());
        mr.close();

        assertThat(h.events(index)).extracting(KeyHistory.Event::what).containsExactly(KeyHistory.What.REGISTERED,
            KeyHistory.What.DEREGISTERED);
        assertThat(h.last(index).object()).contains("MR of 8192 bytes").contains("REMOTE_WRITE");
        for (int i = 0; i < 10; i++)
        {
            final MemoryRegion again = k.rig.pdB.regMr(buf, 8192, RuleRig.REMOTE_ALL);
            assertThat(h.index(again.lkey())).isEqualTo(index);
            again.close();
        }
        assertThat(h.events(index)).hasSize(KeyHistory.EVENTS_PER_INDEX);
        assertThat(h.events(index).get(0).sequence()).isEqualTo(19);
        assertThat(h.last(index).what()).isEqualTo(KeyHistory.What.DEREGISTERED);
    }
}
