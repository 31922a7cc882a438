package dev.rnicsim.scenarios.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DeviceProfiles;
import dev.rnicsim.simnic.DevinfoReader;
import dev.rnicsim.verbs.OdpCaps;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ODP, implicit ODP and GPU groups through their own registration paths, refusals naming the device's caps, and
 * the best and worst huge-page contiguity.
 */
class PlannerKindsTest
{
    private static final long GIB = 1L << 30;
    private static final Planner.HostSpec HOST = new Planner.HostSpec(64 * GIB, 8L << 20, false, 0, 0, 65_530);

    private static Workload yaml(final String text)
    {
        return Workload.parse("w.yaml", text);
    }

    private static Plan.Limit limit(final Plan p, final String name)
    {
        return p.limits().stream().filter(l -> l.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void shouldPinNothingForAnOdpGroupAndAdviseNoMemlock()
    {
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), HOST, yaml("""
            groups:
              - name: odp-buf
                count: 2
                size: 256M
                access: lw,rw,odp
            """));
        final Plan.GroupResult g = p.groups().get(0);
        assertThat(g.kind()).isEqualTo("odp");
        assertThat(g.pinnedBytesPerMr()).isZero();
        // create_user_odp_mr reserves one entry per 4 KiB block of the range.
        assertThat(g.mttEntriesPerMr()).isEqualTo((256L << 20) / 4096);
        assertThat(limit(p, "RLIMIT_MEMLOCK").required()).isZero();
        assertThat(limit(p, "RAM").required()).isZero();
        assertThat(p.breach()).isNull();
        assertThat(p.advice()).noneMatch(a -> a.contains("RLIMIT_MEMLOCK"));
        assertThat(p.settings()).noneMatch(s -> s.name().equals("RLIMIT_MEMLOCK"));
        assertThat(p.notes()).anyMatch(n -> n.contains("ODP MRs pin nothing"));
    }

    @Test
    void shouldRefuseAnOdpGroupOnConnectX3NamingItsOdpCaps()
    {
        final Plan p = Planner.plan(DeviceProfiles.connectx3(), HOST, yaml("""
            groups:
              - name: tensors
                count: 2
                size: 2G
                backing: 2m
                access: lw,rw,odp
            """));
        assertThat(p.breach().limit()).isEqualTo("registration refused");
        assertThat(p.breach().group()).isEqualTo("tensors");
        assertThat(p.breach().message()).contains("EOPNOTSUPP").contains("odp general caps 0x0")
            .contains("IBV_ODP_SUPPORT");
        assertThat(p.groups().get(0).pinnedBytesPerMr()).isZero();
        assertThat(p.totals().pinnedBytes()).isZero();
        assertThat(p.advice()).noneMatch(a -> a.contains("RLIMIT_MEMLOCK"));
        assertThat(p.advice()).anyMatch(a -> a.startsWith("no setting fixes the refusal of group 'tensors'")
            && a.contains("general_odp_caps 0x0") && a.contains("ODP_SUPPORT"));
    }

    @Test
    void shouldNameTheDriversOwnReasonWhenAPinnedGroupIsRefused()
    {
        // efa_reg_mr: REMOTE_WRITE needs the device's RDMA WRITE capability (efa-gen1 has none): EOPNOTSUPP.
        final Plan p = Planner.plan(DeviceProfiles.byName("efa-gen1"), HOST, yaml("""
            groups:
              - name: tensors
                count: 2
                size: 64M
                access: lw,rw
            """));
        assertThat(p.breach().limit()).isEqualTo("registration refused");
        assertThat(p.advice()).anyMatch(a -> a.startsWith("no setting fixes the refusal of group 'tensors'")
            && a.contains("REMOTE_WRITE") && !a.contains("odp"));
    }

    @Test
    void shouldGiveAnImplicitOdpGroupOneChildPer1GibReachedThroughPrefetch()
    {
        final Plan p = Planner.plan(DeviceProfiles.connectx5(), HOST, yaml("""
            groups:
              - name: everything
                count: 1
                size: 4G
                access: lw,rw,odp
                implicit: true
            """));
        final Plan.GroupResult g = p.groups().get(0);
        assertThat(g.kind()).isEqualTo("odp-implicit");
        assertThat(g.pinnedBytesPerMr()).isZero();
        // A 1 GiB slice reaches one or two 1 GiB slots (by its alignment), scaled to the 4 GiB.
        assertThat(g.mttEntriesPerMr() % AdapterTables.IMPLICIT_CHILD_ENTRIES).isZero();
        assertThat(g.mttEntriesPerMr()).isBetween(4 * AdapterTables.IMPLICIT_CHILD_ENTRIES,
            8 * AdapterTables.IMPLICIT_CHILD_ENTRIES);
        assertThat(p.breach()).isNull();
    }

    @Test
    void shouldRefuseAnImplicitGroupOnADeviceWithoutImplicitOdp()
    {
        final DeviceProfile explicitOnly = DeviceProfiles.connectx5().withAttributes(DeviceProfiles.connectx5()
            .attributes().toBuilder().odpCaps(new OdpCaps(OdpCaps.SUPPORT, OdpCaps.SEND | OdpCaps.WRITE, 0, 0, 0))
            .build());
        final Plan p = Planner.plan(explicitOnly, HOST, yaml("""
            groups:
              - name: everything
                count: 1
                size: 1G
                access: lw,odp
                implicit: true
            """));
        assertThat(p.breach().limit()).isEqualTo("registration refused");
        assertThat(p.breach().message()).contains("IBV_ODP_SUPPORT_IMPLICIT");
        assertThat(p.advice()).anyMatch(a -> a.contains("ODP_SUPPORT_IMPLICIT"));
    }

    @Test
    void shouldMapBar1ForDmabufGroupsAndBreakWhereBar1RunsOut()
    {
        final String group = """
            groups:
              - name: weights
                count: %d
                size: 64M
                backing: gpu
                gpu: dmabuf
                access: lw,rw,rr
            """;
        final Plan fits = Planner.plan(DeviceProfiles.connectx5(), HOST, yaml(group.formatted(4)));
        final Plan.GroupResult g = fits.groups().get(0);
        assertThat(g.kind()).isEqualTo("dmabuf");
        assertThat(g.bar1BytesPerMr()).isEqualTo(64L << 20);
        assertThat(g.pinnedBytesPerMr()).isZero();
        assertThat(limit(fits, "GPU BAR1").required()).isEqualTo(256L << 20);
        assertThat(limit(fits, "GPU BAR1").fits()).isTrue();
        assertThat(fits.breach()).isNull();
        final Plan breaks = Planner.plan(DeviceProfiles.connectx5(), HOST, yaml(group.formatted(5)));
        assertThat(breaks.breach().limit()).isEqualTo("GPU BAR1");
        assertThat(breaks.breach().atMr()).isEqualTo(5);
        assertThat(breaks.advice()).anyMatch(a -> a.startsWith("no setting fixes GPU BAR1"));
    }

    @Test
    void shouldRegisterPeerMemoryGroupsThroughTheClientAndRefuseDmabufOnMlx4()
    {
        final Plan peer = Planner.plan(DeviceProfiles.connectx5(), HOST, yaml("""
            groups:
              - name: weights
                count: 2
                size: 32M
                backing: gpu
                gpu: peer-memory
            """));
        assertThat(peer.groups().get(0).kind()).isEqualTo("peer-memory");
        assertThat(peer.groups().get(0).bar1BytesPerMr()).isEqualTo(32L << 20);
        assertThat(peer.breach()).isNull();
        final Plan mlx4 = Planner.plan(DeviceProfiles.connectx3(), HOST, yaml("""
            groups:
              - name: weights
                count: 2
                size: 32M
                backing: gpu
            """));
        assertThat(mlx4.breach().limit()).isEqualTo("registration refused");
        assertThat(mlx4.breach().message()).contains("cannot register dma-bufs");
        assertThat(mlx4.advice()).anyMatch(a -> a.contains("gpu: peer-memory"));
    }

    @Test
    void shouldGiveBestAndWorstContiguityAndUseTheWorstByDefault()
    {
        final Workload w = yaml("""
            groups:
              - name: tensors
                count: 2
                size: 64M
                backing: 2m
            """);
        final Planner.HostSpec host = new Planner.HostSpec(64 * GIB, UserProcess.RLIM_INFINITY, false, 64, 0,
            65_530);
        final Plan worst = Planner.plan(DeviceProfiles.connectx5(), host, w);
        final Plan.GroupResult g = worst.groups().get(0);
        assertThat(g.mttEntriesWorst()).isEqualTo(32);
        assertThat(g.mttEntriesBest()).isLessThan(32);
        assertThat(g.mttEntriesPerMr()).isEqualTo(g.mttEntriesWorst());
        assertThat(worst.contiguity()).isEqualTo("worst");
        assertThat(worst.notes()).anyMatch(n -> n.contains("the verdict uses the worst case"));
        final Plan best = Planner.plan(DeviceProfiles.connectx5(), host, w, Planner.Contiguity.BEST);
        assertThat(best.groups().get(0).mttEntriesPerMr()).isEqualTo(g.mttEntriesBest());
        assertThat(best.totals().mttEntries()).isLessThan(worst.totals().mttEntries());
        assertThat(best.notes()).anyMatch(n -> n.contains("the verdict uses the best case"));
    }

    @Test
    void shouldGiveOneEntryPer2MibPageEitherWayWhenPageSizeCapStopsAt2Mib()
    {
        final DeviceProfile capped = DevinfoReader.withOverrides(DeviceProfiles.connectx5(),
            List.of("page_size_cap=0x201000"));
        final Plan p = Planner.plan(capped, new Planner.HostSpec(64 * GIB, UserProcess.RLIM_INFINITY, false, 2048, 0,
            65_530), yaml("""
            groups:
              - name: tensors
                count: 1
                size: 2G
                backing: 2m
            """), Planner.Contiguity.BEST);
        assertThat(p.groups().get(0).mttEntriesBest()).isEqualTo(1024);
        assertThat(p.groups().get(0).mttEntriesWorst()).isEqualTo(1024);
        assertThat(p.notes()).anyMatch(n -> n.contains("whether its huge pages are contiguous or not"));
    }
}
