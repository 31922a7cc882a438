package dev.rnicsim.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What creation reports back on every device of the suite: an RC QP's capacities ({@code ibv_query_qp} with
 * IBV_QP_CAP) are each at least the ones asked for (rdma-core tests/test_qp.py {@code test_query_qp},
 * {@code verify_qp_attrs}), and a CQ has at least the entries asked for (ibv_create_cq(3): "the CQ will have at least
 * cqe entries"). How much more is the provider's own sizing (libmlx5's WQEs, rxe's queues, each driver's CQ rounding).
 */
class QpCapsConformanceTest
{
    static List<String> devices()
    {
        return ConformanceDevices.names();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldGrantAtLeastTheCapacitiesAndEntriesAskedFor(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            final int sge = Math.min(3, rig.attributes.maxSge());
            final QpCap asked = new QpCap(10, 20, sge, sge, 32);
            final CompletionQueue cq = rig.ctxB.createCq(100);
            assertThat(cq.cqe()).as("cq->cqe for 100 asked").isGreaterThanOrEqualTo(100);
            final QueuePair qp = rig.pdB.createQp(new QpInitAttr(cq, cq, QpType.RC, asked, false));
            final QpCap granted = qp.cap();
            assertThat(granted.maxSendWr()).as("max_send_wr").isGreaterThanOrEqualTo(asked.maxSendWr());
            assertThat(granted.maxRecvWr()).as("max_recv_wr").isGreaterThanOrEqualTo(asked.maxRecvWr());
            assertThat(granted.maxSendSge()).as("max_send_sge").isGreaterThanOrEqualTo(asked.maxSendSge());
            assertThat(granted.maxRecvSge()).as("max_recv_sge").isGreaterThanOrEqualTo(asked.maxRecvSge());
            assertThat(granted.maxInlineDataBytes()).as("max_inline_data")
                .isGreaterThanOrEqualTo(asked.maxInlineDataBytes());
            qp.close();
            cq.close();
        }
    }

    /**
     * Past the device's limits creation is refused with EINVAL and leaves nothing: a CQ of {@code max_cqe + 1}
     * entries (every driver compares the count with max_cqe before it rounds it: rxe {@code rxe_cq_chk_attr}, mlx5
     * {@code mlx5_ib_create_cq}, {@code efa_create_cq}, libirdma {@code ucreate_cq}, ...), and a QP of one SGE more
     * than {@code max_sge} (rdma-core tests/test_qp.py {@code test_create_qp_with_attr} expects the failure).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("devices")
    void shouldRefuseACqOrQpPastTheDevicesLimits(final String name)
    {
        try (Rig rig = Rig.unconnected(name))
        {
            final VerbsException cq = catchThrowableOfType(VerbsException.class,
                () -> rig.ctxB.createCq(rig.attributes.maxCqe() + 1));
            assertThat(cq).as("a CQ of max_cqe + 1 entries").isNotNull();
            assertThat(cq.errnoName()).isEqualTo(Errno.EINVAL);
            final CompletionQueue ok = rig.ctxB.createCq(16);
            final int sge = rig.attributes.maxSge() + 1;
            final VerbsException qp = catchThrowableOfType(VerbsException.class, () -> rig.pdB.createQp(
                new QpInitAttr(ok, ok, QpType.RC, new QpCap(4, 4, sge, 1, 0), false)));
            assertThat(qp).as("a QP of max_sge + 1 send SGEs").isNotNull();
            assertThat(qp.errnoName()).isEqualTo(Errno.EINVAL);
            ok.close();
        }
    }
}
