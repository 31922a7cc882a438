package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.VerbsException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The SRQ limits of each driver: max_srq_wr and max_srq_sge as the driver reports them (not max_qp_wr and max_sge),
 * the errno of an SRQ above them, and the max_wr an SRQ holds and reports after the driver's rounding.
 */
class SrqLimitsTest
{
    private static SharedReceiveQueue create(final DeviceProfile profile, final SrqAttr attr)
    {
        return RuleRig.unconnected(profile).pdB.createSrq(attr);
    }

    private static VerbsException refused(final DeviceProfile profile, final SrqAttr attr)
    {
        return catchThrowableOfType(VerbsException.class, () -> create(profile, attr));
    }

    @Test
    void shouldReportEachDriversOwnSrqLimitsNotItsQpLimits()
    {
        // Dumps: ConnectX-3 16383/31, ConnectX-6 Lx 32767/31, old rxe 16384/27; code: siw.h SIW_MAX_SRQ_WR,
        // rxe_param.h RXE_MAX_SRQ_WR/RXE_MAX_SRQ_SGE, cxgb4 t4_max_rq_size/T4_MAX_RECV_SGE.
        assertThat(limits(DeviceProfiles.connectx3())).containsExactly(16383, 31);
        assertThat(limits(DeviceProfiles.connectx5())).containsExactly(32767, 31);
        assertThat(limits(ConnectXProfiles.connectx6Lx())).containsExactly(32767, 31);
        assertThat(limits(DeviceProfiles.rxeLegacy())).containsExactly(16384, 27);
        assertThat(limits(DeviceProfiles.rxe())).containsExactly(1 << 20, 27);
        assertThat(limits(DriverProfiles.siw())).containsExactly(327680, 6);
        assertThat(limits(DriverProfiles.cxgb4())).containsExactly(8190, 4);
        assertThat(DriverProfiles.siw().attributes().maxSrqWr())
            .isGreaterThan(DriverProfiles.siw().attributes().maxQpWr());
    }

    @Test
    void shouldReadMaxSrqWrAndMaxSrqSgeFromADumpAndTakeQpLimitsWhereTheDeviceHasNoSrqs() throws Exception
    {
        // ibv_devinfo prints max_srq_wr and max_srq_sge after max_srq, and only when max_srq > 0 (devinfo.c).
        final DevinfoResult cx3 = DevinfoReader.read(dump("connectx3-mlx4.txt"));
        assertThat(limits(cx3.profile())).containsExactly(16383, 31);
        final DevinfoResult rxe = DevinfoReader.read(dump("rxe.txt"));
        assertThat(limits(rxe.profile())).containsExactly(16384, 27);
        final DevinfoResult e810 = DevinfoReader.read(dump("irdma-e810.txt"));
        assertThat(e810.profile().attributes().maxSrq()).isZero();
        assertThat(limits(e810.profile())).containsExactly(8127, 6);
        assertThat(e810.defaultedFields()).doesNotContain("max_srq_wr", "max_srq_sge");
        assertThat(DevinfoWriter.write("mlx4_0", cx3.profile().attributes()))
            .contains("max_srq_wr:\t\t\t16383", "max_srq_sge:\t\t\t31");
    }

    private static Path dump(final String file) throws Exception
    {
        return Path.of(SrqLimitsTest.class.getResource("/devinfo/" + file).toURI());
    }

    private static List<Integer> limits(final DeviceProfile p)
    {
        return List.of(p.attributes().maxSrqWr(), p.attributes().maxSrqSge());
    }

    @Test
    void shouldTakeAnSiwSrqDeeperThanItsQpsAndRefuseOneAboveSiwMaxSrqWr()
    {
        // siw_create_srq: max_wr up to SIW_MAX_SRQ_WR (10 x SIW_MAX_QP_WR), EINVAL above it.
        final DeviceProfile siw = DriverProfiles.siw();
        final int deep = siw.attributes().maxQpWr() + 1;
        assertThat(create(siw, new SrqAttr(deep, 1, 0)).query().maxWr()).isEqualTo(deep);
        assertThat(refused(siw, new SrqAttr(327681, 1, 0)).errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(refused(siw, new SrqAttr(16, 7, 0)).errnoName()).isEqualTo(Errno.EINVAL);
    }

    @Test
    void shouldAnswerE2bigOnCxgb4AndEinvalElsewhereForAnSrqAboveTheDevicesLimits()
    {
        // c4iw_create_srq: max_wr > t4_max_rq_size or max_sge > T4_MAX_RECV_SGE is -E2BIG; mlx4_ib_create_srq,
        // mlx5_ib_create_srq, rxe_srq_chk_init and siw_create_srq answer -EINVAL. cxgb4 is given SRQs here.
        final DeviceProfile cxgb4 = withSrqs(DriverProfiles.cxgb4());
        final VerbsException deep = refused(cxgb4, new SrqAttr(8191, 1, 0));
        assertThat(deep.errnoName()).isEqualTo(Errno.E2BIG);
        assertThat(deep.getMessage()).contains("max_srq_wr=8190", "c4iw_create_srq", "nothing created");
        assertThat(refused(cxgb4, new SrqAttr(16, 5, 0)).errnoName()).isEqualTo(Errno.E2BIG);
        assertThat(create(cxgb4, new SrqAttr(8190, 4, 0)).query().maxWr()).isEqualTo(8190);
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx3(), DeviceProfiles.connectx5(),
            DeviceProfiles.rxe(), DeviceProfiles.rxeLegacy(), DriverProfiles.siw()))
        {
            final DeviceAttributes a = p.attributes();
            assertThat(refused(p, new SrqAttr(a.maxSrqWr() + 1, 1, 0)).errnoName()).as(p.name())
                .isEqualTo(Errno.EINVAL);
            assertThat(refused(p, new SrqAttr(16, a.maxSrqSge() + 1, 0)).errnoName()).as(p.name())
                .isEqualTo(Errno.EINVAL);
        }
    }

    @Test
    void shouldRefuseAnSrqAboveMaxSrqWrEvenWhereMaxQpWrIsLarger()
    {
        // mlx4: max_qp_wr 16351 but max_srq_wr 16383, so 16383 fits; mlx5: max_qp_wr 32768 but max_srq_wr 32767
        // (mlx5_ib_create_srq: max_wr >= 1 << log_max_srq_sz is EINVAL).
        assertThat(create(DeviceProfiles.connectx3(), new SrqAttr(16383, 31, 0)).query().maxSge()).isEqualTo(31);
        assertThat(refused(DeviceProfiles.connectx5(), new SrqAttr(32768, 1, 0)).errnoName())
            .isEqualTo(Errno.EINVAL);
        assertThat(create(DeviceProfiles.connectx5(), new SrqAttr(16, 31, 0)).query().maxSge()).isEqualTo(31);
    }

    @Test
    void shouldHoldAndReportMaxWrRoundedAsTheDriverRoundsIt()
    {
        // mlx5/mlx4: msrq.max = roundup_pow_of_two(max_wr + 1), reported max_wr = max - 1; rxe: rxe_queue_init's
        // ring, rxe_query_srq answers index_mask. siw and cxgb4 report the max_wr asked for here.
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx3(),
            DeviceProfiles.rxe()))
        {
            assertThat(create(p, new SrqAttr(100, 1, 0)).query().maxWr()).as(p.name()).isEqualTo(127);
            assertThat(create(p, new SrqAttr(127, 1, 0)).query().maxWr()).as(p.name()).isEqualTo(127);
            assertThat(create(p, new SrqAttr(128, 1, 0)).query().maxWr()).as(p.name()).isEqualTo(255);
        }
        assertThat(create(DeviceProfiles.connectx5(), new SrqAttr(32767, 1, 0)).query().maxWr()).isEqualTo(32767);
        assertThat(create(DriverProfiles.siw(), new SrqAttr(100, 1, 0)).query().maxWr()).isEqualTo(100);
        assertThat(SimSrq.depth(DeviceProfiles.connectx5(), 0)).isZero(); // a 1-slot ring holds nothing
    }

    @Test
    void shouldTakeAsManyReceivesAsTheRoundedDepthAndArmALimitUpToIt()
    {
        // mlx5 with max_wr 4: an 8-slot queue, 7 receives; ibv_modify_srq IBV_SRQ_LIMIT up to 7 (mlx5_ib_modify_srq:
        // srq_limit >= msrq.max is EINVAL), 8 refused and nothing changed.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final SharedReceiveQueue srq = rig.pdB.createSrq(new SrqAttr(4, 1, 0));
        final List<RecvWr> wrs = new ArrayList<>();
        for (int i = 0; i < 7; i++)
        {
            wrs.add(RecvWr.of(i, new Sge(0, 0, 0)));
        }
        srq.postRecv(wrs);
        assertThat(srq.receivesPosted()).isEqualTo(7);
        final PostException full = catchThrowableOfType(PostException.class,
            () -> srq.postRecv(List.of(RecvWr.of(8, new Sge(0, 0, 0)))));
        assertThat(full.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(catchThrowableOfType(VerbsException.class, () -> srq.modifyLimit(8)).errnoName())
            .isEqualTo(Errno.EINVAL);
        assertThat(srq.query().srqLimit()).isZero();
        srq.modifyLimit(7);
        assertThat(srq.query().srqLimit()).isEqualTo(7);
    }

    @Test
    void shouldResizeOnRxeKeepingItsReceivesAndRefuseAResizeOnMlx5()
    {
        // rxe (IBV_DEVICE_SRQ_RESIZE): rxe_srq_chk_attr (0, above max_srq_wr, below the limit: EINVAL),
        // rxe_queue_resize (the receives posted must fit: EINVAL); mlx5_ib_modify_srq: IB_SRQ_MAX_WR is EINVAL.
        final SharedReceiveQueue rxe = create(DeviceProfiles.rxe(), new SrqAttr(4, 1, 0));
        final List<RecvWr> five = new ArrayList<>();
        for (int i = 0; i < 5; i++)
        {
            five.add(RecvWr.of(i, new Sge(0, 0, 0)));
        }
        rxe.postRecv(five);
        for (final int bad : new int[] {0, (1 << 20) + 1, 3})
        {
            assertThat(catchThrowableOfType(VerbsException.class, () -> rxe.resize(bad)).errnoName()).as("" + bad)
                .isEqualTo(Errno.EINVAL);
        }
        rxe.modifyLimit(6);
        assertThat(catchThrowableOfType(VerbsException.class, () -> rxe.resize(5)).getMessage())
            .contains("srq_limit=6", "nothing changed");
        assertThat(rxe.query().maxWr()).isEqualTo(7);
        rxe.resize(8);
        assertThat(rxe.query().maxWr()).isEqualTo(15);
        assertThat(rxe.receivesPosted()).isEqualTo(5);
        final SharedReceiveQueue mlx5 = create(DeviceProfiles.connectx5(), new SrqAttr(4, 1, 0));
        assertThat(catchThrowableOfType(VerbsException.class, () -> mlx5.resize(8)).errnoName())
            .isEqualTo(Errno.EINVAL);
        assertThat(mlx5.query().maxWr()).isEqualTo(7);
    }

    @Test
    void shouldCheckSrqLimitAtCreationOnlyOnSiw()
    {
        // ibv_create_srq(3): srq_limit is ignored at creation; siw_create_srq alone refuses one above max_wr (u32).
        final VerbsException siw = refused(DriverProfiles.siw(), new SrqAttr(16, 1, 17));
        assertThat(siw.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(siw.getMessage()).contains("srq_limit=17", "siw_create_srq", "nothing created");
        assertThat(refused(DriverProfiles.siw(), new SrqAttr(16, 1, -1)).getMessage())
            .contains("srq_limit=4294967295");
        assertThat(create(DriverProfiles.siw(), new SrqAttr(16, 1, 16)).query().srqLimit()).isEqualTo(16);
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx5(), DeviceProfiles.connectx3(),
            DeviceProfiles.rxe(), withSrqs(DriverProfiles.hns()), withSrqs(DriverProfiles.cxgb4()),
            withSrqs(DriverProfiles.bnxtRe())))
        {
            assertThat(create(p, new SrqAttr(16, 1, 17)).query().srqLimit()).as(p.name()).isZero();
        }
    }

    @Test
    void shouldCiteTheProfilesOwnDriverAndPrintU32sAsPassed()
    {
        final VerbsException cx5Size = refused(DeviceProfiles.connectx5(), new SrqAttr(-1, 1, 0));
        assertThat(cx5Size.getMessage()).contains("max_wr=4294967295", "mlx5_ib_create_srq").doesNotContain("rxe_");
        final VerbsException cxgb4 = refused(withSrqs(DriverProfiles.cxgb4()), new SrqAttr(16, 5, 0));
        assertThat(cxgb4.getMessage()).contains("c4iw_create_srq").doesNotContain("rxe_", "mlx5");
        final SharedReceiveQueue mlx5 = create(DeviceProfiles.connectx5(), new SrqAttr(4, 1, 0));
        assertThat(catchThrowableOfType(VerbsException.class, () -> mlx5.modifyLimit(8)).getMessage())
            .contains("mlx5_ib_modify_srq").doesNotContain("rxe_");
        for (final DeviceProfile p : List.of(withSrqs(DriverProfiles.cxgb4()), withSrqs(DriverProfiles.hns()),
            DeviceProfiles.connectx3()))
        {
            final SharedReceiveQueue srq = create(p, new SrqAttr(4, 1, 0));
            assertThat(catchThrowableOfType(VerbsException.class, () -> srq.modifyLimit(-1)).getMessage()).as(p.name())
                .contains("srq_limit=4294967295").doesNotContain("rxe_");
            assertThat(catchThrowableOfType(VerbsException.class, () -> srq.resize(0)).getMessage()).as(p.name())
                .doesNotContain("mlx5", "rxe_");
        }
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final VerbsException qp = catchThrowableOfType(VerbsException.class, () -> rig.pdA.createQp(
            new QpInitAttr(rig.cqA, rig.cqA, QpType.RC, new QpCap(-1, 8, 1, 1, 0), false)));
        assertThat(qp.getMessage()).contains("max_send_wr=4294967295", "max_recv_wr=8").doesNotContain("maxSendWr");
    }

    @Test
    void shouldAnswerE2bigOnCxgb4ForTheLargestU32MaxWr()
    {
        // c4iw_create_srq compares the u32 max_wr with t4_max_rq_size: 2^32 - 1 is E2BIG, as any count past it
        final VerbsException e = refused(DriverProfiles.cxgb4(), new SrqAttr(-1, 1, 0));
        assertThat(e.errnoName()).isEqualTo(Errno.E2BIG);
        assertThat(e.getMessage()).contains("max_wr=4294967295", "max_srq_wr=8190", "c4iw_create_srq");
        assertThat(refused(DriverProfiles.cxgb4(), new SrqAttr(16, -1, 0)).errnoName()).isEqualTo(Errno.E2BIG);
    }

    @Test
    void shouldCiteTheProfilesOwnDriverWhenRefusingAnSrqOfNoEntries()
    {
        assertThat(refused(DeviceProfiles.rxe(), new SrqAttr(0, 1, 0)).getMessage())
            .contains("max_wr=0", "rxe_srq_chk_init refuses 0");
        assertThat(refused(DriverProfiles.hfi1(), new SrqAttr(0, 1, 0)).getMessage())
            .contains("hfi1", "rvt_create_srq").doesNotContain("rxe");
        for (final DeviceProfile p : List.of(DeviceProfiles.connectx3(), DriverProfiles.cxgb4(), DriverProfiles.hns(),
            DriverProfiles.bnxtRe(), DriverProfiles.siw(), DriverProfiles.qedr()))
        {
            final VerbsException e = refused(withSrqs(p), new SrqAttr(16, 0, 0));
            assertThat(e.errnoName()).as(p.name()).isEqualTo(Errno.EINVAL);
            assertThat(e.getMessage()).as(p.name()).contains("max_sge=0", p.driver() + ": ", "_srq", "assumed",
                "nothing created").doesNotContain("rxe");
        }
    }

    private static DeviceProfile withSrqs(final DeviceProfile p)
    {
        return p.withAttributes(p.attributes().toBuilder().maxSrq(1024).build());
    }
}
