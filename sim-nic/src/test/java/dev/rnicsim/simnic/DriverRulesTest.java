package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.mtt.MKey;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/**
 * The distinctive registration rules of each driver's built-in profile, one example each, with the kernel file
 * that has the rule in the test's name or comment. Every refused call is checked to leave nothing pinned and no
 * MR behind.
 */
class DriverRulesTest
{
    private static final long PAGE = 4096;
    private static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);

    /** One device of the profile on a fresh host, one process (with CAP_IPC_LOCK, so only the driver limits
     * large MRs) and one PD: no QP, which devices with one or two SGEs could not create with a rig's defaults. */
    private record Rig(SimContext ctx, SimPd pdA)
    {
        static Rig of(final DeviceProfile profile)
        {
            final SimDevice d = new SimFabric().addHost("h").addDevice("sim:h/" + profile.name(), profile);
            final SimContext ctx = d.open(d.host().host().spawn("app"));
            ctx.process().capIpcLock(true);
            return new Rig(ctx, (SimPd) ctx.allocPd());
        }

        long bufferA(final long lengthBytes)
        {
            return ctx.memory().allocate(lengthBytes, dev.rnicsim.verbs.Backing.BASE_PAGES);
        }

        dev.rnicsim.pagetable.UserProcess processA()
        {
            return ctx.process();
        }
    }

    private static VerbsException refused(final ThrowingCallable call)
    {
        final Throwable t = catchThrowable(call);
        assertThat(t).as("the verb throws a VerbsException").isInstanceOf(VerbsException.class);
        return (VerbsException) t;
    }

    /** Registers on a fresh rig and expects the errno, with nothing pinned or registered after. */
    private static VerbsException assertRegRefused(final DeviceProfile profile, final long lengthBytes,
        final Set<Access> access, final Errno errno)
    {
        final Rig rig = Rig.of(profile);
        final long buf = rig.bufferA(lengthBytes);
        final long pinnedBefore = rig.processA().pinnedVmPages();
        final VerbsException e = refused(() -> rig.pdA.regMr(buf, lengthBytes, access));
        assertThat(e.errnoName()).as(e.getMessage()).isEqualTo(errno);
        assertThat(e.verb()).isEqualTo("ibv_reg_mr");
        assertThat(rig.processA().pinnedVmPages()).isEqualTo(pinnedBefore);
        assertThat(rig.pdA.memoryRegions()).isEmpty();
        return e;
    }

    private static MemoryRegion reg(final Rig rig, final Set<Access> access)
    {
        return rig.pdA.regMr(rig.bufferA(PAGE), PAGE, access);
    }

    // ------------------------------------------------------------------ efa: efa_verbs.c efa_reg_mr

    @Test
    void efaWithoutTheRdmaReadCapRefusesRemoteReadWithEopnotsupp()
    {
        final VerbsException e = assertRegRefused(DriverProfiles.efaGen1(), PAGE,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ), Errno.EOPNOTSUPP);
        assertThat(e.getMessage()).contains("REMOTE_READ", "RDMA READ capability", "efa-gen1", "efa_verbs.c");
        assertThat(reg(Rig.of(DriverProfiles.efaGen1()), LOCAL).lkey()).isNotZero();
    }

    @Test
    void efaWithRdmaReadTakesRemoteReadButNotRemoteWriteUntilTheWriteCap()
    {
        final Rig rig = Rig.of(DriverProfiles.efa());
        assertThat(reg(rig, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ)).rkey()).isNotZero();
        assertRegRefused(DriverProfiles.efa(), PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE),
            Errno.EOPNOTSUPP);
        final Rig gen3 = Rig.of(DriverProfiles.efaGen3());
        assertThat(reg(gen3, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE)).rkey()).isNotZero();
    }

    @Test
    void efaRefusesAtomicsAndMwBindButAcceptsRelaxedOrderingAsOptional()
    {
        assertRegRefused(DriverProfiles.efaGen3(), PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_ATOMIC),
            Errno.EOPNOTSUPP);
        assertRegRefused(DriverProfiles.efaGen3(), PAGE, EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND),
            Errno.EOPNOTSUPP);
        assertThat(reg(Rig.of(DriverProfiles.efaGen1()),
            EnumSet.of(Access.LOCAL_WRITE, Access.RELAXED_ORDERING)).lkey()).isNotZero();
    }

    @Test
    void efaHasNoMemoryWindowsAndNoFastRegistration()
    {
        final Rig rig = Rig.of(DriverProfiles.efa());
        assertThat(refused(() -> rig.pdA.allocMw(MwType.TYPE_1)).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
        assertThat(refused(() -> rig.pdA.allocMr(1)).errnoName()).isEqualTo(Errno.EOPNOTSUPP);
    }

    // ------------------------------------------------------------------ mana: mr.c VALID_MR_FLAGS

    @Test
    void manaRefusesAFlagOutsideValidMrFlagsWithEinvalNotEopnotsupp()
    {
        final VerbsException e = assertRegRefused(DriverProfiles.mana(), PAGE,
            EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND), Errno.EINVAL);
        assertThat(e.getMessage()).contains("MW_BIND", "mana/mr.c");
        assertThat(reg(Rig.of(DriverProfiles.mana()), EnumSet.of(Access.LOCAL_WRITE,
            Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC)).lkey()).isNotZero();
    }

    // ------------------------------------------------------------------ errnos

    @Test
    void hnsReturnsEnomemForAnyPinFailureWhereOtherDriversPassItThrough()
    {
        final long unmapped = 0x4000_0000L;
        final VerbsException mlx5 = refused(() -> Rig.of(DeviceProfiles.connectx5()).pdA.regMr(unmapped, PAGE, LOCAL));
        assertThat(mlx5.errnoName()).as(mlx5.getMessage()).isEqualTo(Errno.EFAULT);
        final Rig hns = Rig.of(DriverProfiles.hns());
        final VerbsException e = refused(() -> hns.pdA.regMr(unmapped, PAGE, LOCAL));
        assertThat(e.errnoName()).as("hns_roce_mr.c mtr_alloc_bufs").isEqualTo(Errno.ENOMEM);
        assertThat(e.getMessage()).contains("EFAULT", "hns_roce_mr.c");
        assertThat(hns.processA().pinnedVmPages()).isZero();
    }

    // ------------------------------------------------------------------ keys

    @Test
    void siwKeysAreTheIndexShiftedLeftWithAZeroKeyByteAndLkeyEqualsRkey()
    {
        final Rig rig = Rig.of(DriverProfiles.siw());
        for (int i = 0; i < 5; i++)
        {
            final MemoryRegion mr = reg(rig, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
            assertThat(mr.lkey() & 0xff).as("siw_mr_add_mem: stag = id << 8").isZero();
            assertThat(mr.rkey()).isEqualTo(mr.lkey());
        }
    }

    @Test
    void hnsGivesAFreedIndexsVeryKeyBackAtOnce()
    {
        final Rig rig = Rig.of(DriverProfiles.hns());
        final MemoryRegion first = reg(rig, LOCAL);
        final int key = first.lkey();
        first.close();
        final MemoryRegion second = reg(rig, LOCAL);
        assertThat(second.lkey()).as("ida_alloc_range + hw_index_to_key").isEqualTo(key);
        assertThat(key & 0xff).isZero();
    }

    @Test
    void cxgb4KeyByteComesFromOneDeviceWideCounter()
    {
        final Rig rig = Rig.of(DriverProfiles.cxgb4());
        final int a = reg(rig, LOCAL).lkey();
        final int b = reg(rig, LOCAL).lkey();
        final int c = reg(rig, LOCAL).lkey();
        assertThat(MKey.index(b, 8)).isNotEqualTo(MKey.index(a, 8));
        assertThat((b & 0xff) - (a & 0xff)).as("write_tpt_entry: atomic_inc_return(&key) & 0xff").isEqualTo(1);
        assertThat((c & 0xff) - (b & 0xff)).isEqualTo(1);
    }

    @Test
    void hfi1PutsTheIndexInTheTop16BitsOfTheLkey()
    {
        final Rig rig = Rig.of(DriverProfiles.hfi1());
        final int a = reg(rig, LOCAL).lkey();
        final int b = reg(rig, LOCAL).lkey();
        assertThat(MKey.index(b, 16) - MKey.index(a, 16)).as("rvt_alloc_lkey: r << (32 - lkey_table_size)")
            .isEqualTo(1);
        assertThat(DriverProfiles.hfi1().attributes().maxMr()).isEqualTo(1 << 16);
        assertThat(DriverProfiles.hfi1().traits().keyVariantBits()).isEqualTo(16);
    }

    @Test
    void qedrGivesRkeyZeroWithoutRemoteAccessAndAZeroKeyByte()
    {
        final Rig rig = Rig.of(DriverProfiles.qedr());
        final MemoryRegion local = reg(rig, LOCAL);
        assertThat(local.rkey()).as("qedr_reg_user_mr sets rkey only with remote rights").isZero();
        assertThat(local.lkey() & 0xff).isZero();
        assertThat(reg(rig, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ)).rkey()).isNotZero();
    }

    // ------------------------------------------------------------------ page-buffer lists

    @Test
    void bnxtReRefusesAnMrPastItsTwoPblLevelsWithEio()
    {
        final DeviceProfile p = DevinfoReader.withOverrides(DriverProfiles.bnxtRe(), List.of("page_size_cap=0x1000"));
        final long limit = p.traits().maxTranslationEntries();
        assertThat(limit).as("qplib_res.h: two levels of MAX_PBL_LVL_1_PGS = 512").isEqualTo(512L * 512);
        final VerbsException e = assertRegRefused(p, (limit + 1) * PAGE, LOCAL, Errno.EIO);
        assertThat(e.getMessage()).contains(Long.toString(limit + 1), "bnxt_re", "PBL", "2 levels");
        final Rig rig = Rig.of(p);
        assertThat(rig.pdA.regMr(rig.bufferA(limit * PAGE), limit * PAGE, LOCAL).lkey()).isNotZero();
    }

    @Test
    void qedrsTwoLayeredPblOf64KibPagesIsItsLimitWithEinval()
    {
        final DriverTraits t = DriverProfiles.qedr().traits();
        assertThat(t.pblLevels()).isEqualTo(2);
        assertThat(t.maxTranslationEntries()).as("qedr_prepare_pbl_tbl MAX_PBES_TWO_LAYER").isEqualTo(8192L * 8192);
        assertThat(t.translationOverflowErrno()).isEqualTo(Errno.EINVAL);
        assertThat(DriverProfiles.qedr().attributes().maxMrSizeBytes()).as("max_mr_mw_fmr_size").isEqualTo(1L << 40);
    }

    // ------------------------------------------------------------------ fast registration, windows, ODP

    @Test
    void fastRegistrationPageListLengthsAreTheDrivers()
    {
        record Limit(DeviceProfile profile, int maxPages)
        {
        }
        for (final Limit l : List.of(new Limit(DriverProfiles.siw(), 256), new Limit(DriverProfiles.bnxtRe(), 512),
            new Limit(DriverProfiles.hns(), 512), new Limit(DeviceProfiles.connectx3(), 511)))
        {
            final Rig rig = Rig.of(l.profile());
            assertThat(rig.pdA.allocMr(l.maxPages()).lkey()).as(l.profile().name()).isNotZero();
            final VerbsException e = refused(() -> rig.pdA.allocMr(l.maxPages() + 1));
            assertThat(e.errnoName()).as(l.profile().name()).isEqualTo(Errno.EINVAL);
            assertThat(e.getMessage()).contains(Integer.toString(l.maxPages()), l.profile().traits().driver());
        }
    }

    @Test
    void memoryWindowsOnlyWhereTheDriverHasThem()
    {
        for (final DeviceProfile p : List.of(DriverProfiles.siw(), DriverProfiles.qedr(), DriverProfiles.mana(),
            DriverProfiles.hfi1(), DeviceProfiles.generic()))
        {
            final Rig rig = Rig.of(p);
            assertThat(refused(() -> rig.pdA.allocMw(MwType.TYPE_1)).errnoName()).as(p.name())
                .isEqualTo(Errno.EOPNOTSUPP);
        }
        for (final DeviceProfile p : List.of(DriverProfiles.bnxtRe(), DriverProfiles.hns(), DriverProfiles.cxgb4()))
        {
            final Rig rig = Rig.of(p);
            assertThat(rig.pdA.allocMw(MwType.TYPE_2).rkey()).as(p.name()).isNotZero();
        }
    }

    @Test
    void onDemandPagingOnlyOnMlx5PartsThatReportItAndCurrentRxe()
    {
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            final boolean odp = p.attributes().odpCaps().supported();
            // rxe has ODP since Linux 6.4 (rxe_odp.c); rxe-legacy, the older kernel's dump, has none.
            assertThat(odp).as(p.name()).isEqualTo(p.driver().equals("mlx5") && !p.name().equals("bluefield2")
                || p.name().equals("rxe"));
            final Rig rig = Rig.of(p);
            final long buf = rig.bufferA(PAGE);
            final Set<Access> access = EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND);
            if (odp)
            {
                assertThat(rig.pdA.regMr(buf, PAGE, access).lkey()).as(p.name()).isNotZero();
            }
            else
            {
                assertThat(refused(() -> rig.pdA.regMr(buf, PAGE, access)).errnoName()).as(p.name())
                    .isEqualTo(Errno.EOPNOTSUPP);
            }
        }
    }

    // ------------------------------------------------------------------ efa: efa_verbs.c efa_create_qp
    // efa_qp_validate_attr (and rdma-core providers/efa/verbs.c efa_check_qp_attr): UD and SRD only, -EOPNOTSUPP

    @Test
    void efaRefusesRcAndUcQpsWithEopnotsuppAndLeavesNothingBehind()
    {
        for (final DeviceProfile p : List.of(DriverProfiles.efaGen1(), DriverProfiles.efa(), DriverProfiles.efaGen3()))
        {
            final Rig rig = Rig.of(p);
            final dev.rnicsim.verbs.CompletionQueue cq = rig.ctx.createCq(16);
            final long pinnedBefore = rig.processA().pinnedVmPages();
            final QpInitAttr rc = QpInitAttr.rc(cq);
            for (final QpInitAttr attr : List.of(rc, new QpInitAttr(cq, cq, QpType.UC, rc.cap(), false)))
            {
                final VerbsException e = refused(() -> rig.pdA.createQp(attr));
                assertThat(e.errnoName()).as(p.name() + " " + attr.type()).isEqualTo(Errno.EOPNOTSUPP);
                assertThat(e.getMessage()).as(p.name()).contains("type " + attr.type(), "efa driver", "[UD]",
                    "efa_verbs.c", "nothing was created", rig.ctx.device().name(), "mlx5");
            }
            assertThat(rig.ctx.device().objects().qpsLive()).as(p.name() + ": no QP left").isZero();
            assertThat(rig.processA().pinnedVmPages()).as(p.name() + ": no ring pinned").isEqualTo(pinnedBefore);
            rig.pdA.dealloc();
            assertThat(rig.pdA.isClosed()).as(p.name() + ": the PD has no user left").isTrue();
        }
    }

    @Test
    void eachDriverAcceptsTheQpTypesOfItsCreateQpAndAnRcQpStillWorksElsewhere()
    {
        // efa_verbs.c efa_create_qp: UD (and SRD) only; siw_verbs.c siw_create_qp, cxgb4 qp.c c4iw_create_qp,
        // erdma_qp_validate_attr (iWARP) and irdma_validate_qp_attrs on an iWARP port: RC only; irdma on RoCE: RC and
        // UD; bnxt_re __from_ib_qp_type: RC and UD; hns check_qp_type on HIP08: RC (UD is the kernel's only);
        // qedr_check_qp_attrs: RC and XRC. The rest take every type the core offers.
        assertThat(DriverProfiles.efa().traits().qpTypes()).containsExactly(QpType.UD);
        assertThat(DriverProfiles.efa().traits().describe()).contains("QP types [UD] only (else EOPNOTSUPP)");
        final java.util.Map<String, Set<QpType>> expected = java.util.Map.of(
            "siw", Set.of(QpType.RC), "cxgb4", Set.of(QpType.RC), "erdma", Set.of(QpType.RC),
            "e810-iwarp", Set.of(QpType.RC), "e810", Set.of(QpType.RC, QpType.UD),
            "bnxt_re", Set.of(QpType.RC, QpType.UD), "hns", Set.of(QpType.RC),
            "qedr", Set.of(QpType.RC, QpType.XRC_SEND, QpType.XRC_RECV));
        for (final DeviceProfile p : DeviceProfiles.builtIn().values())
        {
            final Set<QpType> types = p.traits().driver().equals("efa") ? Set.of(QpType.UD)
                : expected.getOrDefault(p.name(), Set.of(QpType.values()));
            for (final QpType t : QpType.values())
            {
                assertThat(p.traits().acceptsQpType(t)).as(p.name() + " " + t).isEqualTo(types.contains(t));
            }
        }
        final Rig rig = Rig.of(DeviceProfiles.connectx5());
        final dev.rnicsim.verbs.CompletionQueue cq = rig.ctx.createCq(16);
        assertThat(rig.pdA.createQp(QpInitAttr.rc(cq)).qpNum()).isNotNegative();
        assertThat(rig.ctx.device().objects().qpsLive()).isEqualTo(1);
    }

    @Test
    void aUcQpOnADriverWithoutThemIsEopnotsuppAndLeavesNothing()
    {
        for (final DeviceProfile p : List.of(DriverProfiles.bnxtRe(), DriverProfiles.cxgb4(), DriverProfiles.qedr(),
            DriverProfiles.hns(), DeviceProfiles.e810()))
        {
            final Rig rig = Rig.of(p);
            final dev.rnicsim.verbs.CompletionQueue cq = rig.ctx.createCq(16);
            final long pinnedBefore = rig.processA().pinnedVmPages();
            final QpInitAttr rc = QpInitAttr.rc(cq);
            final VerbsException e = refused(() -> rig.pdA.createQp(new QpInitAttr(cq, cq, QpType.UC, rc.cap(),
                false)));
            assertThat(e.errnoName()).as(p.name()).isEqualTo(Errno.EOPNOTSUPP);
            assertThat(e.getMessage()).as(p.name()).contains("type UC", p.traits().driver() + " driver",
                "nothing was created");
            assertThat(rig.ctx.device().objects().qpsLive()).as(p.name()).isZero();
            assertThat(rig.processA().pinnedVmPages()).as(p.name()).isEqualTo(pinnedBefore);
            assertThat(rig.pdA.createQp(rc).qpNum()).as(p.name() + ": RC still works").isNotNegative();
        }
    }

    @Test
    void dmabufOnlyWhereTheDriverRegistersThem()
    {
        assertThat(DriverProfiles.efa().follows(ProviderRule.DMABUF_PINNED)).as("efa_reg_user_mr_dmabuf").isTrue();
        assertThat(DriverProfiles.bnxtRe().follows(ProviderRule.DMABUF_PINNED)).isTrue();
        for (final DeviceProfile p : List.of(DriverProfiles.siw(), DriverProfiles.hfi1(), DriverProfiles.qedr()))
        {
            assertThat(p.follows(ProviderRule.DMABUF_PINNED) || p.follows(ProviderRule.DMABUF_DYNAMIC)).as(p.name())
                .isFalse();
        }
    }

    @Test
    void everyProfileOfADriverWithTransportIwarpIsAnRnic()
    {
        for (final String name : List.of("siw", "cxgb4", "erdma", "e810-iwarp"))
        {
            assertThat(DeviceProfiles.byName(name).traits().transport()).as(name)
                .isEqualTo(DriverTraits.Transport.IWARP);
        }
        assertThat(DriverProfiles.efa().traits().transport()).isEqualTo(DriverTraits.Transport.UNSPECIFIED);
        assertThat(DeviceProfiles.e810().traits().transport()).isEqualTo(DriverTraits.Transport.INFINIBAND);
    }
}
