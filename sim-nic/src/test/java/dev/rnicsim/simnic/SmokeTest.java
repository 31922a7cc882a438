package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class SmokeTest
{
    @Test
    void shouldWriteThenFailWithRemAccessErrAfterDereg()
    {
        final SimFabric fabric = new SimFabric();
        final SimDevice da = fabric.addHost("a").addDevice("sim:a/mlx5_0", DeviceProfiles.connectx5());
        final SimDevice db = fabric.addHost("b").addDevice("sim:b/mlx5_0", DeviceProfiles.connectx5());
        try (Context ca = da.open(); Context cb = db.open())
        {
            final ProtectionDomain pa = ca.allocPd();
            final ProtectionDomain pb = cb.allocPd();
            final CompletionQueue qa = ca.createCq(16);
            final CompletionQueue qb = cb.createCq(16);
            final QueuePair a = pa.createQp(QpInitAttr.rc(qa));
            final QueuePair b = pb.createQp(QpInitAttr.rc(qb));
            a.connect(b.address(), EnumSet.noneOf(Access.class));
            b.connect(a.address(), EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
            final long src = ca.memory().allocate(8192, Backing.BASE_PAGES);
            final long dst = cb.memory().allocate(8192, Backing.BASE_PAGES);
            ca.memory().write(src + 4090, "hello rdma".getBytes());
            final MemoryRegion ms = pa.regMr(src, 8192, EnumSet.of(Access.LOCAL_WRITE));
            final MemoryRegion md = pb.regMr(dst, 8192, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE));
            a.postSend(SendWr.write(1, List.of(new Sge(src + 4090, 10, ms.lkey())), dst + 100, md.rkey()));
            final List<WorkCompletion> wcs = qa.poll(4);
            assertThat(wcs).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS);
            assertThat(new String(cb.memory().read(dst + 100, 10))).isEqualTo("hello rdma");
            final int stale = md.rkey();
            md.close();
            a.postSend(SendWr.write(2, List.of(new Sge(src, 10, ms.lkey())), dst + 100, stale));
            assertThat(qa.poll(4)).extracting(WorkCompletion::status).containsExactly(WcStatus.REM_ACCESS_ERR);
            assertThat(new String(cb.memory().read(dst + 100, 10))).isEqualTo("hello rdma");
            System.out.println(da.counters());
            System.out.println(db.counters());
            System.out.println(da.recentRegistrations());
            System.out.println(fabric.clock().nowNs());
        }
        assertThat(da.counter(SimCounter.PINNED_BYTES)).isZero();
    }
}
