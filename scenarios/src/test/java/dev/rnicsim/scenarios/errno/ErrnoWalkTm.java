package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;

import dev.rnicsim.simnic.ConnectXProfiles;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.TagMatchingList;
import dev.rnicsim.verbs.Sge;
import java.util.ArrayList;
import java.util.List;

/**
 * The errno paths of tag-matching SRQs (sim-nic's {@code TagMatchingList}: ibv_create_srq_ex of type TM and
 * ibv_post_srq_ops), reached through the Java API as a backend calls it. Stateless.
 */
final class ErrnoWalkTm
{
    private ErrnoWalkTm()
    {
    }

    private static TagMatchingList list(final int tags, final int ops)
    {
        return TagMatchingList.create(DeviceProfiles.connectx5(), "mlx5_0", tags, ops, true);
    }

    private static TagMatchingList.Op op(final int opcode, final int handle, final int sges)
    {
        final List<Sge> sgl = new ArrayList<>();
        for (int i = 0; i < sges; i++)
        {
            sgl.add(new Sge(0x1000, 64, 1));
        }
        return new TagMatchingList.Op(1, opcode, 0, 0, handle, 1, sgl, 1, 0xffff);
    }

    /** @return the cases. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        c.add(c("a tag-matching SRQ on a driver without them", "EOPNOTSUPP",
            () -> TagMatchingList.create(DeviceProfiles.rxe(), "rxe0", 1, 1, true), "has no tag-matching SRQs",
            "basic SRQ"));
        c.add(c("a tag-matching SRQ with a plain CQ", "EINVAL",
            () -> TagMatchingList.create(DeviceProfiles.connectx5(), "mlx5_0", 1, 1, false), "needs an extended CQ",
            "ibv_create_cq_ex"));
        c.add(c("a tag-matching SRQ on an mlx5 device without tag matching", "EINVAL",
            () -> TagMatchingList.create(ConnectXProfiles.connectx4(), "mlx5_0", 1, 1, true),
            "log_tag_matching_list_sz=0", "the device has no tag matching", "tm_caps"));
        c.add(c("a tag-matching SRQ with a command queue above max_qp_wr", "EINVAL", () -> list(1, 1 << 30),
            "sizes the SRQ's command QP", "max_qp_wr="));
        c.add(c("more list operations in one post than max_ops", "ENOMEM",
            () -> { throw list(1, 1).post(List.of(op(TagMatchingList.OP_SYNC, 0, 0),
                op(TagMatchingList.OP_SYNC, 0, 0))).refused(); }, "more than max_ops=1", "work queue overflow"));
        c.add(c("a tag added to a full list", "ENOMEM",
            () -> { throw list(1, 4).post(List.of(op(TagMatchingList.OP_ADD, 0, 1),
                op(TagMatchingList.OP_ADD, 0, 1))).refused(); }, "the tag list is full", "IBV_WR_TAG_DEL"));
        c.add(c("a tag of two SGEs", "EINVAL",
            () -> { throw list(1, 4).post(List.of(op(TagMatchingList.OP_ADD, 0, 2))).refused(); },
            "num_sge=2 > tm_caps.max_sge=1", "one SGE"));
        c.add(c("a DEL of a handle past the list", "EINVAL",
            () -> { throw list(1, 4).post(List.of(op(TagMatchingList.OP_DEL, 5, 0))).refused(); },
            "is past the list of 1 tags", "IBV_WR_TAG_ADD returned"));
        c.add(c("a list operation of an unknown opcode", "EINVAL",
            () -> { throw list(1, 4).post(List.of(op(7, 0, 0))).refused(); }, "opcode=7", "bad opcode"));
        return c;
    }
}
