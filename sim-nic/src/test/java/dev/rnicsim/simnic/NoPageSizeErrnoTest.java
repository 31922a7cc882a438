package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.pagetable.BasePage;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * The errno of a registration that no page size of page_size_cap fits ({@code ib_umem_find_best_pgsz} returns 0) is
 * the driver's: irdma answers EOPNOTSUPP ({@code irdma_alloc_iwmr}, called by {@code irdma_reg_user_mr}), mlx5 and
 * the others EINVAL. On a 64 KiB-page host an E810 (page_size_cap 4 KiB | 2 MiB | 1 GiB) has only 2 MiB and 1 GiB
 * left once the core drops the sizes below PAGE_SIZE, so scattered 64 KiB pages fit none.
 */
class NoPageSizeErrnoTest
{
    private static VerbsException registerScattered(final DeviceProfile profile)
    {
        final SimHost host = new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(256L << 20)
            .basePage(BasePage.SIZE_64K).aged(true).build());
        final UserProcess p = host.host().spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        final SimContext c = host.addDevice("sim:h/dev0", profile).open(p);
        final long buf = p.mmapAnonymous(1L << 20);
        final ProtectionDomain pd = c.allocPd();
        final long pinnedBefore = p.pinnedVmPages();
        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> pd.regMr(buf, 1L << 20, EnumSet.of(Access.LOCAL_WRITE)));
        assertThat(e).as(profile.name()).isNotNull();
        assertThat(p.pinnedVmPages()).as("the failed registration unpinned its pages").isEqualTo(pinnedBefore);
        return e;
    }

    @Test
    void shouldAnswerEopnotsuppOnIrdmaWhenNoPageSizeFits()
    {
        final VerbsException e = registerScattered(DeviceProfiles.e810());
        assertThat(e.errno()).isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(e.getMessage()).contains("no page size in page_size_cap=0x40200000")
            .contains("ib_umem_find_best_pgsz");
        assertThat(DeviceProfiles.e810().traits().describe()).contains("no page size of page_size_cap fits: "
            + "EOPNOTSUPP");
    }

    @Test
    void shouldAnswerEinvalOnMlx5ForTheSameLayout()
    {
        final DeviceProfile mlx5WithE810Cap = DeviceProfiles.e810().withTraits(DriverTraits.of("mlx5"));
        final VerbsException e = registerScattered(mlx5WithE810Cap);
        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("ib_umem_find_best_pgsz");
        assertThat(DriverTraits.of("mlx5").noPageSizeErrno()).isEqualTo(Errno.EINVAL);
    }
}
