package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.pagetable.KernelException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * Errnos travel intact from the host and adapter models to the verb, and the detail travels beside the errno rather
 * than inside the message text: a failure of {@code pin_user_pages} under {@code ibv_rereg_mr} keeps its EFAULT
 * (ib_umem_get returns what pin_user_pages returned; ibv_rereg_mr(3) reports it as IBV_REREG_MR_ERR_CMD with that
 * errno), and no layer cuts an errno name out of a message.
 */
class ErrnoTravelTest
{
    private static final long PAGE = 4096;

    @Test
    void shouldKeepTheHostsEfaultAndItsDetailThroughIbvRegMr()
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final long gone = rig.ctxB.memory().allocate(4 * PAGE, Backing.BASE_PAGES);
        rig.ctxB.memory().free(gone, 4 * PAGE);

        final VerbsException e = catchThrowableOfType(VerbsException.class,
            () -> rig.pdB.regMr(gone, 4 * PAGE, RuleRig.LOCAL));

        assertThat(e.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(e.detail()).as("the detail carries no errno name").doesNotStartWith("EFAULT").isNotBlank();
        assertThat(e.getMessage()).isEqualTo("ibv_reg_mr: EFAULT: " + e.detail());
        assertThat(e.getCause()).isInstanceOf(KernelException.class);
        assertThat(((KernelException)e.getCause()).detail()).isEqualTo(e.detail());
    }

    @Test
    void shouldKeepTheHostsEfaultThroughReregTranslationAndLeaveTheMrAsItWas()
    {
        // ibv_rereg_mr(3): a failed kernel command is IBV_REREG_MR_ERR_CMD with the kernel's errno; before this
        // path kept the number, every adapter errno but ENOMEM turned into EINVAL.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final long buf = rig.bufferB(2 * PAGE);
        final MemoryRegion mr = rig.pdB.regMr(buf, 2 * PAGE, RuleRig.REMOTE_ALL);
        final long gone = rig.ctxB.memory().allocate(2 * PAGE, Backing.BASE_PAGES);
        rig.ctxB.memory().free(gone, 2 * PAGE);
        final int lkey = mr.lkey();

        final ReregException e = catchThrowableOfType(ReregException.class,
            () -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_TRANSLATION), null, gone, 2 * PAGE, null));

        assertThat(e.reregError()).isEqualTo(ReregException.ERR_CMD);
        assertThat(e.errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(e.detail()).doesNotStartWith("EFAULT");
        assertThat(mr.lkey()).isEqualTo(lkey);
        assertThat(mr.addr()).isEqualTo(buf);
        assertThat(mr.access()).isEqualTo(RuleRig.REMOTE_ALL);
    }

    @Test
    void shouldKeepTheDependencyRulesDetailWhenReregAccessBreaksIt()
    {
        // ib_check_mr_access: REMOTE_WRITE without LOCAL_WRITE is EINVAL, in rereg as in reg.
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final MemoryRegion mr = rig.pdB.regMr(rig.bufferB(PAGE), PAGE, RuleRig.LOCAL);

        final ReregException e = catchThrowableOfType(ReregException.class,
            () -> mr.rereg(EnumSet.of(ReregFlag.CHANGE_ACCESS), null, 0, 0, EnumSet.of(Access.REMOTE_WRITE)));

        assertThat(e.errnoName()).isEqualTo(Errno.EINVAL);
        assertThat(e.detail()).doesNotContain("ibv_rereg_mr: EINVAL").contains("LOCAL_WRITE");
        assertThat(mr.access()).isEqualTo(RuleRig.LOCAL);
    }

    @Test
    void shouldCarryTheErrnoAndTheDetailAsSeparateFieldsInTheLowerModels()
    {
        final TableException t = new TableException(dev.rnicsim.mtt.Errno.ENOMEM, "no MPT index is free");
        final KernelException k = new KernelException(dev.rnicsim.pagetable.Errno.EFAULT, "0x1000 is not mapped");

        assertThat(t.detail()).isEqualTo("no MPT index is free");
        assertThat(Errors.errno(t)).isEqualTo(Errno.ENOMEM);
        assertThat(Errors.of("ibv_reg_mr", t).detail()).isEqualTo("no MPT index is free");
        assertThat(k.detail()).isEqualTo("0x1000 is not mapped");
        assertThat(Errors.errno(k)).isEqualTo(Errno.EFAULT);
        assertThat(Errors.reregCmd(k).errnoName()).isEqualTo(Errno.EFAULT);
        assertThat(Errors.reregCmd(k).detail()).isEqualTo("0x1000 is not mapped");
    }
}
