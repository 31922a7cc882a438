package dev.rnicsim.ibverbs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.verbs.VerbsException;
import org.junit.jupiter.api.Test;

/**
 * {@link UnknownQpType}: qp_type 77 is EINVAL from libmlx5's send-queue sizing (sq_overhead) when a send queue is
 * asked for, EOPNOTSUPP from the kernel's check_qp_type without one and on rxe; RAW_PACKET, a real type the library
 * does not simulate, is EOPNOTSUPP.
 */
class UnknownQpTypeTest
{
    @Test
    void anUnknownTypeIsRefusedWhereTheRealStackRefusesIt()
    {
        final VerbsException withSendQueue = UnknownQpType.refusal(DeviceProfiles.connectx5(), 77, 16);
        final VerbsException withoutSendQueue = UnknownQpType.refusal(DeviceProfiles.connectx5(), 77, 0);
        final VerbsException rxe = UnknownQpType.refusal(DeviceProfiles.rxe(), 77, 16);
        final VerbsException rawPacket = UnknownQpType.refusal(DeviceProfiles.connectx5(), 8, 16);

        assertThat(withSendQueue.errno()).isEqualTo(22);
        assertThat(withSendQueue.detail()).contains("qp_type 77 is no ibv_qp_type").contains("sq_overhead")
            .contains("set qp_type to IBV_QPT_RC");
        assertThat(withoutSendQueue.errno()).isEqualTo(95);
        assertThat(withoutSendQueue.detail()).contains("check_qp_type");
        assertThat(rxe.errno()).isEqualTo(95);
        assertThat(rawPacket.errno()).isEqualTo(95);
        assertThat(rawPacket.detail()).contains("not simulated");
    }
}
