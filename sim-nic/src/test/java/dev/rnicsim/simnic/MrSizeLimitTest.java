package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/**
 * {@link MrSizeLimit}: how each driver bounds one MR by {@code max_mr_size}. irdma refuses a longer range with
 * EINVAL before pinning, bnxt_re with ENOMEM; efa checks no length and its device counts the MR's pages at the chosen
 * page size, refusing more than {@code max_mr_pages} with ENOMEM, so huge pages register more than max_mr_size.
 */
class MrSizeLimitTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;
    private static final long GIB = 1024 * MIB;

    private final SimFabric fabric = new SimFabric();
    private final SimHost host = fabric.addHost("h", HostConfig.builder().physicalMemoryBytes(4 * GIB)
        .hugepages2M(64).aged(true).build());

    private ProtectionDomain pd(final DeviceProfile profile)
    {
        final SimContext ctx = host.addDevice("d0", profile).open(host.host().spawn("app"));
        ctx.process().capIpcLock(true);
        return ctx.allocPd();
    }

    /** EFA with a device of 256 MR pages (max_mr_size 1 MiB), as efa_query_device reports max_mr_pages x 4 KiB. */
    private static DeviceProfile smallEfa()
    {
        final DeviceProfile efa = DriverProfiles.efa();
        final DriverTraits t = efa.traits();
        final DriverTraits small = new DriverTraits(t.driver(), t.source(), t.transport(), t.keyVariantBits(),
            t.acceptedAccess(), t.unsupportedAccessErrno(), t.translation(), t.pblLevels(), t.pblEntriesPerPage(), 256,
            t.translationOverflowErrno(), t.maxFastRegPages(), t.rdmaRead(), t.rdmaWrite(), t.hcaIdPrefix(),
            t.pinFailureErrno(), t.qpTypes(), t.noPageSizeErrno(), t.verbs(), t.inlineLimit());
        final DeviceAttributes a = efa.attributes().toBuilder().maxMrSizeBytes(MIB).build();
        return efa.withTraits(small).withAttributes(a);
    }

    @Test
    void bnxtReRefusesALengthAboveMaxMrSizeWithEnomemBeforePinning()
    {
        final ProtectionDomain pd = pd(DriverProfiles.bnxtRe());
        final long addr = ((SimPd)pd).context().memory().allocate(4 * KIB, Backing.BASE_PAGES);

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> pd.regMr(addr, (1L << 39) + 1, RuleRig.LOCAL));

        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        // the verbs' field names (ibv_reg_mr's length, ibv_device_attr's max_mr_size), never the Java ones
        assertThat(e).hasMessageContaining("length=549755813889 > max_mr_size=549755813888 of bnxt_re")
            .hasMessageNotContaining("lengthBytes")
            .hasMessageContaining("bnxt_re_reg_user_mr");
    }

    @Test
    void irdmaRefusesItWithEinval()
    {
        final ProtectionDomain pd = pd(DeviceProfiles.e810());
        final long addr = ((SimPd)pd).context().memory().allocate(4 * KIB, Backing.BASE_PAGES);

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> pd.regMr(addr, (32L << 40) + 1, RuleRig.LOCAL));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e).hasMessageContaining("irdma_reg_user_mr");
    }

    @Test
    void efaCountsTheMrsPagesAndRefusesMoreThanMaxMrPagesWithEnomem()
    {
        final ProtectionDomain pd = pd(smallEfa());
        final SimContext ctx = ((SimPd)pd).context();
        final long base = ctx.memory().allocate(2 * MIB, Backing.BASE_PAGES);
        ctx.process().touch(base, 2 * MIB, true);

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> pd.regMr(base, 2 * MIB, RuleRig.LOCAL));

        assertThat(e.errnoName()).isEqualTo(Errno.ENOMEM);
        assertThat(e).hasMessageContaining("the device's max_mr_pages")
            .hasMessageContaining("efa_com_comp_status_to_errno: ENOMEM").hasMessageContaining("back it with huge pages");
        assertThat(ctx.process().pinnedVmPages()).isZero();
    }

    @Test
    void efaRegistersMoreThanMaxMrSizeOnHugePages()
    {
        final ProtectionDomain pd = pd(smallEfa());
        final SimContext ctx = ((SimPd)pd).context();
        final long huge = ctx.memory().allocate(4 * MIB, Backing.HUGETLB_2M);

        final MemoryRegion mr = pd.regMr(huge, 4 * MIB, RuleRig.LOCAL);

        assertThat(mr.lengthBytes()).isEqualTo(4 * MIB).isGreaterThan(ctx.queryDevice().maxMrSizeBytes());
    }
}
