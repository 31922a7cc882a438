package dev.rnicsim.conformance;

import static dev.rnicsim.conformance.Rig.LOCAL;
import static dev.rnicsim.conformance.Rig.PAGE;
import static dev.rnicsim.conformance.Rig.sge;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.PostException;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.RecvWr;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A QP's own receive queue at post time, on every device of the suite: a QP in RESET takes no receive (EINVAL, as
 * rdma-core's {@code tests/utils.py post_rq_state_bad_flow} expects of every provider), a queue holding max_recv_wr
 * receives refuses the next one (ENOMEM: mlx5's {@code mlx5_wq_overflow}, rxe's {@code queue_full}), and a move to
 * RESET empties the queue, so that max_recv_wr receives fit again once the QP is back in INIT (mlx5
 * {@code mlx5_modify_qp} resets the queue indices, rxe {@code rxe_qp_reset} empties it).
 */
class ReceiveQueueConformanceTest
{
    /** Receive work requests the QP asks for: a power of two, granted as asked by mlx5 and rxe. */
    private static final int DEPTH = 16;

    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    private static PostException refused(final Runnable verb)
    {
        final PostException e = catchThrowableOfType(PostException.class, verb::run);
        assertThat(e).as("the post fails").isNotNull();
        return e;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldRefuseAReceiveInResetAndBeyondMaxRecvWrAndTakeAFullQueueAgainAfterReset(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            final QueuePair qp = rig.pdB.createQp(new QpInitAttr(rig.cqB, rig.cqB, QpType.RC, new QpCap(DEPTH, DEPTH,
                1, 1, 0), false));
            final long recv = rig.bufferB(PAGE);
            final MemoryRegion mr = rig.pdB.regMr(recv, PAGE, LOCAL);
            final RecvWr one = RecvWr.of(0, sge(mr, recv, 64));
            assertThat(refused(() -> qp.postRecv(one)).errnoName()).as("a QP in RESET").isEqualTo(Errno.EINVAL);

            // what the provider granted for DEPTH asked (rxe: 2^k - 1 slots), which the queue holds
            final int granted = qp.cap().maxRecvWr();
            assertThat(granted).as("at least the receives asked for").isGreaterThanOrEqualTo(DEPTH);
            for (int round = 0; round < 2; round++)
            {
                qp.modifyToInit(EnumSet.noneOf(Access.class));
                for (int i = 0; i < granted; i++)
                {
                    qp.postRecv(RecvWr.of(i, sge(mr, recv, 64)));
                }
                final PostException full = refused(() -> qp.postRecv(RecvWr.of(granted, sge(mr, recv, 64))));
                assertThat(full.errnoName()).as("round %d: max_recv_wr receives queued", round)
                    .isEqualTo(Errno.ENOMEM);
                assertThat(full.badWrIndex()).isZero();
                final QpAttr.Builder reset = QpAttr.builder().state(QpState.RESET);
                qp.modify(reset.build(), reset.mask());
            }
            assertThat(rig.cqB.poll(granted)).as("RESET discards the receives without completions").isEmpty();
        }
    }
}
