package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ProviderRule#ATOMIC_OPCODES_NOT_IN_PROVIDER}: libcxgb4's {@code c4iw_post_send} (and libsiw's
 * {@code push_send_wqe}) has no case for the atomic opcodes, so a compare-and-swap or fetch-and-add is EINVAL at post with {@code bad_wr} at it, the work requests before
 * it posted; a device of atomic_cap ATOMIC_NONE without the rule answers EOPNOTSUPP.
 */
class AtomicsWithoutProviderCaseTest
{
    private record Posted(RuleRig rig, MemoryRegion local, MemoryRegion remote)
    {
        Sge sge(final long offset, final int bytes)
        {
            return new Sge(local.addr() + offset, bytes, local.lkey());
        }
    }

    private static Posted rig(final DeviceProfile profile)
    {
        final RuleRig rig = RuleRig.connected(profile, RuleRig.ALL_REMOTE);
        final MemoryRegion local = rig.pdA.regMr(rig.bufferA(4096), 4096, EnumSet.of(Access.LOCAL_WRITE));
        final MemoryRegion remote = rig.pdB.regMr(rig.bufferB(4096), 4096,
            EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
        return new Posted(rig, local, remote);
    }

    @Test
    void cxgb4RefusesACompareAndSwapWithEinvalAndPostsTheWorkRequestsBeforeIt()
    {
        final Posted p = rig(DriverProfiles.cxgb4());
        final SendWr write = SendWr.write(1, List.of(p.sge(0, 8)), p.remote().addr(), p.remote().rkey());
        final SendWr cas = SendWr.compareAndSwap(2, p.sge(8, 8), p.remote().addr(), p.remote().rkey(), 0, 1);

        final PostException e = catchThrowableOfType(PostException.class,
            () -> p.rig().qpA.postSend(List.of(write, cas)));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.badWrIndex()).as("bad_wr is the atomic").isEqualTo(1);
        assertThat(e.getMessage()).contains("ATOMIC_CMP_AND_SWP").contains("c4iw_post_send")
            .contains("takes no atomic opcode").contains("fix: use a device with atomics");
        assertThat(p.rig().pollA()).extracting(w -> w.wrId() + " " + w.status())
            .as("the WRITE before it was posted and completes").containsExactly("1 " + WcStatus.SUCCESS);
    }

    @Test
    void cxgb4RefusesAFetchAndAddAsWell()
    {
        final Posted p = rig(DriverProfiles.cxgb4());

        final PostException e = catchThrowableOfType(PostException.class, () -> p.rig().qpA.postSend(
            SendWr.fetchAndAdd(3, p.sge(0, 8), p.remote().addr(), p.remote().rkey(), 1)));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.badWrIndex()).isZero();
        assertThat(p.rig().pollA()).isEmpty();
    }

    @Test
    void siwRefusesAnAtomicWithEinvalToo()
    {
        // libsiw push_send_wqe: map_send_opcode has no siw opcode for the atomics, siw_post_send answers -EINVAL
        final Posted p = rig(DriverProfiles.siw());

        final PostException e = catchThrowableOfType(PostException.class, () -> p.rig().qpA.postSend(
            SendWr.compareAndSwap(4, p.sge(0, 8), p.remote().addr(), p.remote().rkey(), 0, 1)));

        assertThat(e.errno()).isEqualTo(Errno.EINVAL.code());
        assertThat(e.getMessage()).contains("the siw provider's post_send takes no atomic opcode")
            .contains("libsiw push_send_wqe");
    }

    @Test
    void aDeviceOfAtomicNoneWithoutTheRuleAnswersEopnotsupp()
    {
        final Posted p = rig(DeviceProfiles.e810());

        final PostException e = catchThrowableOfType(PostException.class, () -> p.rig().qpA.postSend(
            SendWr.fetchAndAdd(3, p.sge(0, 8), p.remote().addr(), p.remote().rkey(), 1)));

        assertThat(e.errno()).isEqualTo(Errno.EOPNOTSUPP.code());
        assertThat(e.getMessage()).contains("ATOMIC_NONE");
    }
}
