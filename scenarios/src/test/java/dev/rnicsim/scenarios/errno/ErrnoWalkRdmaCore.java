package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.bare;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.cx5;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.rig;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DriverProfiles;
import dev.rnicsim.simnic.QpCreateFlags;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimFabric;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SrqAttr;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * The errno paths that rdma-core's own tests (tests/test_cq.py, test_cqex.py, test_qp.py, test_addr.py, test_fork.py, test_mlx5_huge_page.py)
 * provoke through the library, reached through the Java API. Stateless.
 */
final class ErrnoWalkRdmaCore
{
    private ErrnoWalkRdmaCore()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a CQ on a completion vector the device lacks", "EINVAL",
            () -> cx5().ctx().createCq(16, DeviceProfiles.connectx5().numCompVectors()), "num_comp_vectors",
            "use a vector below"));
        c.add(c("a QP create flag no kernel knows", "EINVAL",
            () -> QpCreateFlags.check(DeviceProfiles.connectx5(), QpType.RC, 1L << 20), "no kernel knows"));
        c.add(c("a QP create flag the driver does not implement", "EOPNOTSUPP",
            () -> QpCreateFlags.check(DeviceProfiles.rxe(), QpType.UD, QpCreateFlags.BLOCK_SELF_MCAST_LB),
            "are not implemented by", "create the QP without them"));
        c.add(c("an address handle on an iWARP device (tests/test_addr.py skips)", "EOPNOTSUPP",
            () -> rig(DriverProfiles.siw()).pd().createAh(AhAttr.toGid("fe80::1")), "is an iWARP device",
            "no create_ah"));
        c.add(c("ibv_fork_init after a registration on a kernel that shares pinned pages at fork (tests/test_fork.py)",
            "EINVAL", () -> {
                final SimDevice d = new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(256L << 20)
                    .forkBehaviour(ForkBehaviour.LEGACY).build()).addDevice("sim:h/cx5", DeviceProfiles.connectx5());
                final Context ctx = d.open();
                final long buf = ctx.memory().allocate(4096, Backing.BASE_PAGES);
                ctx.allocPd().regMr(buf, 4096, EnumSet.of(Access.LOCAL_WRITE));
                ctx.forkInit();
            }, "before asking for fork support", "before the first registration"));
        c.add(c("ibv_fork_init of a backend without it", "EOPNOTSUPP", () -> bare(Context.class).forkInit(),
            "does not provide fork support"));
        c.add(c("ibv_is_fork_initialized of a backend without it", "EOPNOTSUPP", () -> bare(Context.class).forkStatus(),
            "does not report fork support"));
        c.add(c("an SRQ of 0 work requests on rxe", "EINVAL",
            () -> rig(DeviceProfiles.rxe()).pd().createSrq(new SrqAttr(0, 1, 0)), "max_wr=0", "rxe_srq_chk_init"));
        return c;
    }
}
