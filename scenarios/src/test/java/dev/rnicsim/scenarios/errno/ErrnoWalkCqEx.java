package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.cx5;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.rig;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.ExtendedCqs;
import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.verbs.CompletionQueue;
import java.util.ArrayList;
import java.util.List;

/**
 * The errno paths of extended CQs, ibv_resize_cq and ibv_query_rt_values_ex (sim-nic's {@code CqResize} and
 * {@code ExtendedCqs}), reached through the Java API as {@link ErrnoWalkVerbs} reaches the older ones. Stateless.
 */
final class ErrnoWalkCqEx
{
    private ErrnoWalkCqEx()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a resize of a destroyed CQ", "EINVAL", () -> {
            final CompletionQueue cq = cx5().ctx().createCq(8);
            cq.close();
            cq.resize(16);
        }, "the CQ is closed", "resize a live CQ"));
        c.add(c("a resize on a provider without resize_cq", "EOPNOTSUPP",
            () -> rig(DeviceProfiles.byName("siw")).cq().resize(16), "no resize_cq", "create a CQ of the size"));
        c.add(c("a resize to 0 entries", "EINVAL", () -> cx5().cq().resize(0), "must be 1..max_cqe="));
        c.add(c("a resize below the completions the process holds", "EINVAL",
            () -> ((SimCq) cx5().cq()).resize(2, 5), "fewer than the 5 completions waiting", "poll them first"));
        c.add(c("the raw clock of a provider without query_rt_values", "EOPNOTSUPP", () -> {
            final ErrnoWalkVerbs.Rig r = rig(DeviceProfiles.rxe());
            ExtendedCqs.of(r.device().profile()).rawClock((dev.rnicsim.simnic.SimContext) r.ctx());
        }, "has no query_rt_values", "host's clock"));
        final ExtendedCqs mlx5 = ExtendedCqs.of(DeviceProfiles.connectx5());
        c.add(c("an extended CQ naming a plain PD as its parent domain", "EINVAL",
            () -> mlx5.checkCreateCqEx(0, ExtendedCqs.MASK_PD, 0, true), "is no parent domain",
            "ibv_alloc_parent_domain"));
        c.add(c("an extended CQ with an unknown comp_mask bit", "EINVAL",
            () -> mlx5.checkCreateCqEx(0, 1 << 4, 0, false), "comp_mask=0x10", "clear them"));
        c.add(c("an extended CQ with an unknown creation flag", "EINVAL",
            () -> mlx5.checkCreateCqEx(0, ExtendedCqs.MASK_FLAGS, 1 << 5, false), "flags=0x20", "clear them"));
        c.add(c("an extended CQ asking for tag-matching fields of a provider without them", "EOPNOTSUPP",
            () -> ExtendedCqs.of(DeviceProfiles.rxe()).checkCreateCqEx(ExtendedCqs.WC_TM_INFO, 0, 0, false),
            "reads no tag-matching fields", "ask only for fields"));
        return c;
    }
}
