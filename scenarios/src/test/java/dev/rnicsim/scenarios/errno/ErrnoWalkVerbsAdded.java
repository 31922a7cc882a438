package dev.rnicsim.scenarios.errno;

import static dev.rnicsim.scenarios.errno.ErrnoWalkApi.c;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.bare;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.cx5;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.rig;
import static dev.rnicsim.scenarios.errno.ErrnoWalkVerbs.with;

import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.GpuTopology;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.DmAttr;
import dev.rnicsim.verbs.DmaBuf;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import dev.rnicsim.verbs.XrcdFile;
import java.util.ArrayList;
import java.util.List;

/**
 * The errno paths of the verbs added with XRC, asynchronous events, port tables and exported dma-bufs, reached
 * through the Java API as {@link ErrnoWalkVerbs} reaches the older ones. Stateless.
 */
final class ErrnoWalkVerbsAdded
{
    private static final long MIB = 1L << 20;

    private ErrnoWalkVerbsAdded()
    {
    }

    /** @return the cases. */
    static List<ErrnoWalkApi.Case> cases()
    {
        final List<ErrnoWalkApi.Case> c = new ArrayList<>();
        // backends without a feature: the defaults of the verbs-api interfaces
        c.add(c("a dma-buf of a backend without an exporter", "EOPNOTSUPP",
            () -> bare(Context.class).allocDmabuf(4096), "does not export dma-bufs"));
        c.add(c("device memory with a comp_mask on a backend without it", "EOPNOTSUPP",
            () -> bare(Context.class).allocDm(new DmAttr(4096, 0, 1)), "comp_mask"));
        c.add(c("an XRC domain of a backend without XRC", "EOPNOTSUPP", () -> bare(Context.class).openXrcd(),
            "XRC domains"));
        c.add(c("an XRC_RECV QP of a backend without XRC", "EOPNOTSUPP",
            () -> bare(Context.class).createXrcRecvQp(null), "XRC QPs"));
        c.add(c("an XRC SRQ of a backend without XRC", "EOPNOTSUPP",
            () -> bare(ProtectionDomain.class).createXrcSrq(null, null, null), "XRC SRQs"));
        c.add(c("an SRQ number of a backend without it", "EOPNOTSUPP",
            () -> bare(SharedReceiveQueue.class).srqNum(), "SRQ"));
        c.add(c("an async event of a backend without them", "EOPNOTSUPP",
            () -> bare(Context.class).getAsyncEvent(), "ibv_get_async_event"));
        c.add(c("an async event ack of a backend without them", "EOPNOTSUPP",
            () -> bare(Context.class).ackAsyncEvent(null), "ibv_ack_async_event"));
        c.add(c("a P_Key query of a backend without it", "EOPNOTSUPP", () -> bare(Context.class).queryPkey(1, 0),
            "ibv_query_pkey"));
        c.add(c("a GID table query of a backend without it", "EOPNOTSUPP",
            () -> bare(Context.class).queryGidTable(1), "ibv_query_gid_table"));
        // the simulated backend
        c.add(c("an ack of no event", "EINVAL", () -> cx5().ctx().ackAsyncEvent(null), "no event given"));
        c.add(c("a GID table too small for the valid entries of two ports", "EINVAL",
            () -> rig(with(DeviceProfiles.connectx5(), b -> b.physPortCnt(2))).ctx().queryGidTable(1),
            "fewer than the 2 valid GIDs"));
        c.add(c("an XRC_RECV QP created through a PD", "EINVAL", () -> {
            final ErrnoWalkVerbs.Rig r = cx5();
            r.pd().createQp(new QpInitAttr(r.cq(), r.cq(), QpType.XRC_RECV, new QpCap(16, 16, 1, 1, 0), false));
        }, "has no PD", "createXrcRecvQp"));
        c.add(c("a dma-buf on a host without a GPU", "ENODEV", () -> cx5().ctx().allocDmabuf(MIB), "has no GPU",
            "add a GPU"));
        c.add(c("a read of a closed dma-buf", "EBADF", () -> {
            final ErrnoWalkVerbs.Rig r = cx5();
            r.device().host().addGpu("gpu0", 64 * MIB, 64 * MIB, GpuTopology.PIX);
            final DmaBuf b = r.ctx().allocDmabuf(4096);
            b.close();
            b.read(0, 8);
        }, "is closed", "allocate a new dma-buf"));
        c.add(c("a write past the end of a dma-buf", "EFAULT", () -> {
            final ErrnoWalkVerbs.Rig r = cx5();
            r.device().host().addGpu("gpu0", 64 * MIB, 64 * MIB, GpuTopology.PIX);
            try (DmaBuf b = r.ctx().allocDmabuf(4096))
            {
                b.write(b.sizeBytes(), new byte[8]);
            }
        }, "leaves dma-buf", "inside the dma-buf"));
        c.add(c("the number of a basic SRQ on mlx4", "EOPNOTSUPP",
            () -> rig(DeviceProfiles.connectx3()).pd().createSrq(new SrqAttr(4, 1, 0)).srqNum(),
            "numbers only XRC SRQs", "ibv_create_srq_ex of type XRC"));
        // XRC domains named by a file (ib_uverbs_open_xrcd)
        c.add(c("an XRC domain named by no file", "EINVAL", () -> cx5().ctx().openXrcd(null, true, false),
            "no file was given", "pass the inode"));
        c.add(c("an XRC domain of a file no one opened, without O_CREAT", "EAGAIN",
            () -> cx5().ctx().openXrcd(new XrcdFile(8, 42), false, false), "no XRC domain of", "pass O_CREAT"));
        c.add(c("an XRC domain opened with O_EXCL where one exists", "EINVAL", () -> {
            final Context ctx = cx5().ctx();
            ctx.openXrcd(new XrcdFile(8, 42), true, false);
            ctx.openXrcd(new XrcdFile(8, 42), true, true);
        }, "is named by", "drop O_EXCL"));
        return c;
    }
}
