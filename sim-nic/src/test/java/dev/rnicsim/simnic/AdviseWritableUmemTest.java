package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.OdpRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * ibv_advise_mr with PREFETCH_WRITE asks mlx5's {@code get_prefetchable_mr} for a writable umem, and
 * {@code ib_umem_get} makes a umem writable for any right of {@code ib_access_writable} (LOCAL_WRITE, REMOTE_WRITE,
 * REMOTE_ATOMIC, MW_BIND), not for LOCAL_WRITE alone: an ODP MR registered with MW_BIND only takes the advice, one
 * with REMOTE_READ only is EPERM (rdma-core's ibv_advise_mr(3) since PR #1048).
 */
class AdviseWritableUmemTest
{
    private static VerbsException refusal(final OdpRig rig, final Set<Access> rights)
    {
        final long buf = rig.bufferB(4 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, rights);
        final Throwable t = catchThrowable(() -> rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH,
            List.of(new Sge(buf, 4 * PAGE, mr.lkey()))));
        return t instanceof VerbsException e ? e : null;
    }

    @Test
    void prefetchWriteOnAnOdpMrWithMwBindOnlyMapsItWritable()
    {
        final OdpRig rig = OdpRig.connectx5();
        final long buf = rig.bufferB(4 * PAGE);
        final SimOdpMr mr = rig.odpB(buf, 4 * PAGE, EnumSet.of(Access.MW_BIND, Access.ON_DEMAND));

        rig.pdB.adviseMr(MrAdvice.PREFETCH_WRITE, MrAdvice.FLAG_FLUSH, List.of(new Sge(buf, 4 * PAGE, mr.lkey())));

        assertThat(mr.entriesMapped()).isEqualTo(4);
        assertThat(rig.deviceB.tables().firstUnmapped(mr.lkey(), mr.iovaOf(buf), 4, true)).isNegative();
    }

    @Test
    void prefetchWriteOnAnOdpMrWithRemoteReadOnlyIsEpermNamingTheWritableRights()
    {
        final VerbsException e = refusal(OdpRig.connectx5(), EnumSet.of(Access.REMOTE_READ, Access.ON_DEMAND));

        assertThat(e).as("PREFETCH_WRITE on a read-only umem is refused").isNotNull();
        assertThat(e.errnoName()).isEqualTo(Errno.EPERM);
        assertThat(e.getMessage()).contains("REMOTE_WRITE, REMOTE_ATOMIC, MW_BIND: ib_access_writable");
    }

    @Test
    void prefetchWriteOnAnOdpMrWithLocalWriteIsTaken()
    {
        assertThat(refusal(OdpRig.connectx5(), EnumSet.of(Access.LOCAL_WRITE, Access.ON_DEMAND))).isNull();
    }
}
