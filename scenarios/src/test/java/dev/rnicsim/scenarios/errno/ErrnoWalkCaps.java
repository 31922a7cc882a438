package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.rig;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.with;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DriverProfiles;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import java.util.ArrayList;
import java.util.List;

/**
 * The errno paths of queue sizing at creation, as each provider sizes its queues: libmlx4's send WQE past the
 * device's largest descriptor, libirdma's queues past the hardware's quanta, libefa's rounded CQ past max_cqe.
 * Reached through the Java API. Stateless.
 */
final class ErrnoWalkCaps
{
    private ErrnoWalkCaps()
    {
    }

    private static void rcQp(final ErrnoWalkVerbs.Rig r, final QpCap cap)
    {
        r.pd().createQp(new QpInitAttr(r.cq(), r.cq(), QpType.RC, cap, false));
    }

    /** @return the cases. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("an mlx4 send WQE larger than the device's largest descriptor", "EINVAL",
            () -> rcQp(rig(DeviceProfiles.connectx3()), new QpCap(16, 16, 1, 1, 1000)),
            "send WQE of 2048 bytes", "mlx4_calc_sq_wqe_size", "set_user_sq_size", "ask for at most 928 inline"));
        c.add(c("an irdma work-request count past the hardware's quanta", "EINVAL",
            () -> rcQp(rig(DeviceProfiles.e810()), new QpCap(40000, 16, 1, 1, 0)),
            "max_send_wr=40000", "32768 quanta", "irdma_ucreate_qp"));
        c.add(c("an irdma send queue of more quanta than the hardware's", "EINVAL",
            () -> rcQp(rig(DeviceProfiles.e810()), new QpCap(20000, 16, 1, 1, 0)),
            "a queue of 65536 quanta", "irdma_get_sqdepth", "ask for at most 16255"));
        c.add(c("an irdma receive queue of more quanta than the hardware's", "EINVAL",
            () -> rcQp(rig(DeviceProfiles.e810()), new QpCap(16, 20000, 1, 6, 0)),
            "max_recv_wr=20000", "irdma_get_rqdepth", "ask for at most 8191"));
        c.add(c("an EFA CQ whose count rounds past max_cqe", "EINVAL",
            () -> rig(with(DriverProfiles.efa(), b -> b.maxCqe(20000))).ctx().createCq(20000),
            "32768 entries", "max_cqe=20000", "efa_create_cq", "ask for at most 16384"));
        return c;
    }
}
