package dev.rnicsim.simnic;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.verbs.*;
import java.util.*;
import org.junit.jupiter.api.Test;

class RuleScratchTest
{
    @Test
    void explore()
    {
        final SimFabric fabric = new SimFabric();
        final SimHost h = fabric.addHost("a", HostConfig.builder().physicalMemoryBytes(8L << 30).hugepages2M(16).hugepages1G(2).build());
        final SimDevice d5 = h.addDevice("cx5", DeviceProfiles.connectx5());
        final SimDevice de = h.addDevice("e810", DeviceProfiles.e810());
        final SimContext c5 = (SimContext) d5.open();
        c5.process().capIpcLock(true);
        final ProtectionDomain pd5 = c5.allocPd();
        final long hb = c5.memory().allocate(4 << 20, Backing.HUGETLB_2M);
        c5.memory().write(hb + (2 << 20), new byte[] {1});
        c5.memory().write(hb, new byte[] {1});
        System.out.println(c5.process().translate(hb) + " " + c5.process().translate(hb + (2<<20)));
        System.out.println(pd5.regMr(hb, 4 << 20, EnumSet.of(Access.LOCAL_WRITE)));
        final long h2 = c5.memory().allocate(2 << 20, Backing.HUGETLB_2M);
        System.out.println(pd5.regMr(h2, 2 << 20, EnumSet.of(Access.LOCAL_WRITE)));
        final SimContext ce = (SimContext) de.open();
        ce.process().capIpcLock(true);
        final long he = ce.memory().allocate(8 << 20, Backing.HUGETLB_2M);
        System.out.println(ce.allocPd().regMr(he, 8 << 20, EnumSet.of(Access.LOCAL_WRITE)));
        long t0 = System.nanoTime();
        final long g = c5.memory().allocate(1L << 30, Backing.BASE_PAGES);
        long s = fabric.clock().nowNs();
        SimMr m = (SimMr) pd5.regMr(g, 1L << 30, EnumSet.of(Access.LOCAL_WRITE));
        System.out.println(m + " " + (fabric.clock().nowNs() - s) + " wall " + (System.nanoTime() - t0) / 1e6);
        final long g1 = c5.memory().allocate(1L << 30, Backing.HUGETLB_1G);
        s = fabric.clock().nowNs();
        m = (SimMr) pd5.regMr(g1, 1L << 30, EnumSet.of(Access.LOCAL_WRITE));
        System.out.println(m + " " + (fabric.clock().nowNs() - s));
        System.out.println(d5.recentRegistrations());
    }
}
