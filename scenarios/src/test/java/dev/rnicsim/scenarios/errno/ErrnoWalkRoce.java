package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import java.util.ArrayList;
import java.util.List;

/**
 * The RoCE errno paths of the Java API: an RC QP's modify to RTR whose address vector names an empty source GID entry
 * (a script's {@code connect ... sgid_index=} is refused before the modify, by {@code ProgramRtr.checkSgidIndex}).
 * Stateless.
 */
final class ErrnoWalkRoce
{
    private ErrnoWalkRoce()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("an RTR address vector from an empty GID entry", "ENODATA", () -> {
            final SimDevice rxe = new SimFabric().addHost("a").addDevice("sim:a/rxe0", DeviceProfiles.byName("rxe"));
            final SimContext ctx = rxe.open(rxe.host().host().spawn("app"));
            final QueuePair qp = ctx.allocPd().createQp(QpInitAttr.rc(ctx.createCq(16)));
            qp.modifyToInit(java.util.Set.of(Access.REMOTE_WRITE));
            final QpAttr.Builder rtr = QpAttr.builder().state(QpState.RTR).av(new AhAttr(rxe.gid(), 0, 1, 1))
                .pathMtu(3).destQpNum(qp.qpNum()).rqPsn(0).maxDestRdAtomic(1).minRnrTimer(12);
            qp.modify(rtr.build(), rtr.mask());
        }, "sgid_index=1", "rdma_get_gid_attr", "no IPv4 address", "give an index"));
        return c;
    }
}
