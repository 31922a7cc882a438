package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ibv_resize_cq's rules ({@link CqResize}), completion timestamps from the simulated clock, and the extended CQ
 * attributes each provider takes ({@link ExtendedCqs}).
 */
class ExtendedCqTest
{
    private static int errnoOf(final Runnable r)
    {
        try
        {
            r.run();
        }
        catch (final VerbsException e)
        {
            return e.errno();
        }
        return 0;
    }

    /** Posts n signalled WRITEs from A to B, runs the fabric: n completions wait on cqA. */
    private static void writes(final RuleRig rig, final int n)
    {
        final long src = rig.bufferA(4096);
        final long dst = rig.bufferB(4096);
        final MemoryRegion local = rig.pdA.regMr(src, 4096, RuleRig.LOCAL);
        final MemoryRegion remote = rig.pdB.regMr(dst, 4096, java.util.EnumSet.of(dev.rnicsim.verbs.Access.LOCAL_WRITE,
            dev.rnicsim.verbs.Access.REMOTE_WRITE));
        for (int i = 0; i < n; i++)
        {
            rig.qpA.postSend(SendWr.write(i, sgl(sge(local, src, 64)), dst, remote.rkey()));
        }
        rig.fabric.progressAll();
    }

    @Test
    void resizeBelowTheCompletionsWaitingWeighsTheRoundedSizeOnMlx4Only()
    {
        // libmlx4 mlx4_resize_cq: align_queue_size(9 + 1) = 16 against 10 waiting + 1, allowed; rxe_cq_chk_attr
        // and ibv_resize_cq(3) weigh the 9 asked for.
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx3(), DeviceProfiles.connectx5(),
            DeviceProfiles.rxe()))
        {
            final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
            writes(rig, 10);
            if (p.driver().equals("mlx4"))
            {
                rig.cqA.resize(9);
                assertThat(rig.cqA.cqe()).isEqualTo(15);
                assertThat(rig.cqA.poll(16)).hasSize(10);
                continue;
            }
            final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.cqA.resize(9));
            assertThat(e.errnoName()).as(p.name()).isEqualTo(Errno.EINVAL);
            assertThat(e.getMessage()).as(p.name()).contains("cqe=9", "10 completions", "nothing changed")
                .contains(p.driver().equals("rxe") ? "rxe_cq_chk_attr" : "ibv_resize_cq(3)");
            assertThat(rig.cqA.cqe()).as(p.name()).isEqualTo(127);
        }
    }

    @Test
    void resizeToANegativeCountSaysSoAndAsksForAtLeastOneEntry()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final VerbsException e = catchThrowableOfType(VerbsException.class, () -> rig.cqA.resize(-1));
        assertThat(e.getMessage()).contains("cqe=-1 must be 1..max_cqe=", "at least 1 entry")
            .doesNotContain("fewer");
        assertThat(catchThrowableOfType(VerbsException.class, () -> rig.ctxA.createCq(0)).getMessage())
            .contains("cqe=0", "at least 1 entry");
    }

    @Test
    void resizeRoundsAsAtCreationAndRefusesWhatTheProvidersRefuse()
    {
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.rxe()))
        {
            final RuleRig rig = RuleRig.connected(p, RuleRig.ALL_REMOTE);
            final CompletionQueue cq = rig.cqA;
            final SimDevice dev = rig.ctxA.device();
            final long pinnedBefore = dev.counter(SimCounter.PINNED_BYTES);
            assertThat(cq.cqe()).as(p.name()).isEqualTo(127);
            cq.resize(200);
            assertThat(cq.cqe()).as(p.name() + ": 200 + 1 rounded up to 256, less one").isEqualTo(255);
            assertThat(dev.counter(SimCounter.PINNED_BYTES) - pinnedBefore).as(p.name() + ": the ring grew to 256 "
                + "CQEs of 64 bytes").isEqualTo(256 * 64 - 128 * 64);
            cq.resize(129);
            assertThat(cq.cqe()).as(p.name() + ": a size it has: nothing changes").isEqualTo(255);

            writes(rig, 5);
            assertThat(errnoOf(() -> cq.resize(4))).as(p.name() + ": fewer than the 5 completions waiting")
                .isEqualTo(Errno.EINVAL.code());
            assertThat(errnoOf(() -> cq.resize(0))).as(p.name()).isEqualTo(Errno.EINVAL.code());
            assertThat(errnoOf(() -> cq.resize(p.attributes().maxCqe() + 1))).as(p.name())
                .isEqualTo(Errno.EINVAL.code());
            assertThat(cq.cqe()).as(p.name() + ": a refused resize keeps the size").isEqualTo(255);
            cq.resize(5);
            assertThat(cq.cqe()).as(p.name()).isEqualTo(7);
            // 4 rounds to the 7 entries the CQ has: mlx5 answers 0 before it looks at the 5 waiting, rxe checks them
            assertThat(errnoOf(() -> cq.resize(4))).as(p.name()).isEqualTo(p.driver().equals("mlx5") ? 0
                : Errno.EINVAL.code());
            assertThat(cq.poll(16)).as(p.name() + ": the completions moved to the new ring").hasSize(5)
                .extracting(WorkCompletion::wrId).containsExactly(0L, 1L, 2L, 3L, 4L);
            assertThat(dev.counter(SimCounter.PINNED_BYTES) - pinnedBefore).as(p.name() + ": one page of ring, and "
                + "the 4 KiB MR the WRITEs came from").isEqualTo(4096 - 128 * 64 + 4096);
        }
    }

    @Test
    void resizeIsRefusedWhereTheProviderHasNone()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.byName("siw"), RuleRig.ALL_REMOTE);
        assertThatThrownBy(() -> rig.cqA.resize(8)).isInstanceOf(VerbsException.class)
            .hasMessageContaining("EOPNOTSUPP").hasMessageContaining("no resize_cq");
        assertThat(rig.cqA.cqe()).as("siw_create_cq: roundup_pow_of_two(64), unchanged").isEqualTo(64);
    }

    @Test
    void completionsCarryTheSimulatedTimeTheDeviceWroteThem()
    {
        final RuleRig rig = RuleRig.connected(DeviceProfiles.connectx5(), RuleRig.ALL_REMOTE);
        final long before = rig.fabric.clock().nowNs();
        writes(rig, 2);
        final List<WorkCompletion> wcs = rig.cqA.poll(4);
        assertThat(wcs).hasSize(2);
        assertThat(wcs.get(0).completionTimeNs()).isGreaterThan(before)
            .isLessThanOrEqualTo(wcs.get(1).completionTimeNs());
        assertThat(wcs.get(1).completionTimeNs()).isLessThanOrEqualTo(rig.fabric.clock().nowNs());
        final ExtendedCqs mlx5 = ExtendedCqs.of(DeviceProfiles.connectx5());
        assertThat(mlx5.cycles(1_000_000)).as("1 ms at 156250 kHz").isEqualTo(156_250);
        assertThat(mlx5.cycles(1_000_000_000_000L + 3)).as("1000 s and 3 ns").isEqualTo(156_250_000_000L);
        assertThat(mlx5.rawClock(rig.ctxA)).isEqualTo(mlx5.cycles(rig.fabric.clock().nowNs()));
    }

    @Test
    void eachProviderTakesItsOwnWcFlagsMaskAndFlags()
    {
        final ExtendedCqs mlx5 = ExtendedCqs.of(DeviceProfiles.connectx5());
        final ExtendedCqs rxe = ExtendedCqs.of(DeviceProfiles.rxe());
        final long ts = ExtendedCqs.WC_STANDARD | ExtendedCqs.WC_COMPLETION_TIMESTAMP
            | ExtendedCqs.WC_COMPLETION_TIMESTAMP_WALLCLOCK | ExtendedCqs.WC_CVLAN | ExtendedCqs.WC_FLOW_TAG;
        mlx5.checkCreateCqEx(ts, ExtendedCqs.MASK_FLAGS | ExtendedCqs.MASK_PD, ExtendedCqs.FLAG_IGNORE_OVERRUN, false);
        mlx5.checkCreateCqEx(ExtendedCqs.WC_STANDARD | ExtendedCqs.WC_TM_INFO, 0, 0, false);
        ExtendedCqs.of(ConnectXProfiles.connectx4()).checkCreateCqEx(ExtendedCqs.WC_TM_INFO, 0, 0, false);
        assertThat(errnoOf(() -> rxe.checkCreateCqEx(ExtendedCqs.WC_TM_INFO, 0, 0, false)))
            .as("rxe reads no tag-matching fields").isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(errnoOf(() -> mlx5.checkCreateCqEx(0, 1 << 4, 0, false))).isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> mlx5.checkCreateCqEx(0, ExtendedCqs.MASK_FLAGS, 1 << 5, false)))
            .isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> mlx5.checkCreateCqEx(ExtendedCqs.WC_TM_INFO, 1 << 4, 0, false)))
            .as("mlx5 checks comp_mask before wc_flags").isEqualTo(Errno.EINVAL.code());
        assertThat(errnoOf(() -> mlx5.checkCreateCqEx(0, ExtendedCqs.MASK_PD, 0, true)))
            .as("a plain PD as parent_domain").isEqualTo(Errno.EINVAL.code());

        rxe.checkCreateCqEx(ExtendedCqs.WC_STANDARD, ExtendedCqs.MASK_FLAGS, ExtendedCqs.FLAG_SINGLE_THREADED, false);
        assertThat(errnoOf(() -> rxe.checkCreateCqEx(ExtendedCqs.WC_COMPLETION_TIMESTAMP, 0, 0, false)))
            .isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(errnoOf(() -> rxe.checkCreateCqEx(0, ExtendedCqs.MASK_PD, 0, false)))
            .as("rxe has no parent domains: ibv_cmd_create_cq_ex").isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(errnoOf(() -> rxe.checkCreateCqEx(0, ExtendedCqs.MASK_FLAGS, ExtendedCqs.FLAG_IGNORE_OVERRUN,
            false))).as("the kernel's rxe_create_cq refuses creation flags").isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(rxe.hcaCoreClockKhz()).isZero();
        assertThat(rxe.domains()).isFalse();
        assertThat(mlx5.domains()).isTrue();
        assertThat(errnoOf(() -> rxe.rawClock(null))).isEqualTo(Errno.EOPNOTSUPP.code());

        final ExtendedCqs bnxt = ExtendedCqs.of(DeviceProfiles.byName("bnxt_re"));
        bnxt.checkCreateCqEx(ExtendedCqs.WC_STANDARD, 0, 0, false);
        assertThat(errnoOf(() -> bnxt.checkCreateCqEx(0, ExtendedCqs.MASK_FLAGS, ExtendedCqs.FLAG_IGNORE_OVERRUN,
            false))).as("a kernel driver refuses a creation flag it does not take").isEqualTo(Errno.EOPNOTSUPP.code());
    }

    @Test
    void mlx4AndIrdmaRefuseAMaskBitOrCreationFlagTheyLackWithEopnotsupp()
    {
        // mlx4's create_cq answers ENOTSUP (EOPNOTSUPP on Linux) for a comp_mask or flag outside its
        // CREATE_CQ_SUPPORTED_*; irdma's goes through ibv_cmd_create_cq_ex (EOPNOTSUPP for the mask) to the kernel's
        // irdma_create_cq (EOPNOTSUPP for any creation flag). rdma-core's tests/test_cqex.py test_create_cq_ex
        // accepts only success or EOPNOTSUPP for each flag.
        for (final String name : List.of("connectx3", "e810", "e810-iwarp"))
        {
            final ExtendedCqs x = ExtendedCqs.of(DeviceProfiles.byName(name));
            x.checkCreateCqEx(ExtendedCqs.WC_STANDARD, ExtendedCqs.MASK_FLAGS, ExtendedCqs.FLAG_SINGLE_THREADED, false);
            assertThat(errnoOf(() -> x.checkCreateCqEx(0, ExtendedCqs.MASK_FLAGS, ExtendedCqs.FLAG_IGNORE_OVERRUN,
                false))).as(name + " IGNORE_OVERRUN").isEqualTo(Errno.EOPNOTSUPP.code());
            assertThat(errnoOf(() -> x.checkCreateCqEx(0, ExtendedCqs.MASK_PD, 0, false))).as(name + " MASK_PD")
                .isEqualTo(Errno.EOPNOTSUPP.code());
        }
    }
}
