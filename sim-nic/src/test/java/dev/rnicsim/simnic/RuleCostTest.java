package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.RuleRig.sge;
import static dev.rnicsim.simnic.RuleRig.sgl;
import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The simulated cost of registration and of the data path (the calibration of CostModel): orders of magnitude, huge
 * pages against base pages, dereg against reg, durations priced by the {@link CostModel} from the counted work,
 * and translation-cache misses priced above hits.
 */
class RuleCostTest
{
    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;
    private static final long GIB = 1024 * MIB;
    private static final long US = 1_000;
    private static final long MS = 1_000_000;
    private static final long S = 1_000_000_000;

    private final SimFabric fabric = new SimFabric();
    private final SimHost host = fabric.addHost("big", RuleRig.host(8 * GIB, 520, 2));
    private final SimDevice device = host.addDevice("mlx5_0", DeviceProfiles.connectx5());
    private final SimContext ctx = device.open(host.host().spawn("app"));
    private final ProtectionDomain pd = ctx.allocPd();
    private final CostModel costs = fabric.costModel();

    RuleCostTest()
    {
        ctx.process().capIpcLock(true);
    }

    /** Registers a fresh buffer and returns the REG event it produced. */
    /** Host page faults the last {@link #register} took inside pin_user_pages. */
    private long lastFaultIns;

    private RegistrationEvent register(final long lengthBytes, final Backing backing)
    {
        final long addr = ctx.memory().allocate(lengthBytes, backing);
        final int before = device.recentRegistrations().size();
        final long startNs = fabric.clock().nowNs();
        final long faultsBefore = host.host().counter(dev.rnicsim.pagetable.VmEvent.PGFAULT);
        final MemoryRegion mr = pd.regMr(addr, lengthBytes, RuleRig.LOCAL);
        lastFaultIns = host.host().counter(dev.rnicsim.pagetable.VmEvent.PGFAULT) - faultsBefore;
        final List<RegistrationEvent> trace = device.recentRegistrations();
        assertThat(trace).hasSize(before + 1);
        final RegistrationEvent reg = trace.get(before);
        assertThat(reg.kind()).isEqualTo(RegistrationEvent.Kind.REG);
        assertThat(reg.lkey()).isEqualTo(mr.lkey());
        assertThat(fabric.clock().nowNs() - startNs).as("the clock advances by the recorded duration")
            .isEqualTo(reg.durationNs());
        return reg;
    }

    /** Page-table leaves a pin walks: one per page of the backing's leaf size. */
    private static long leaves(final long lengthBytes, final Backing backing)
    {
        final long leafBytes = switch (backing)
        {
            case HUGETLB_2M -> 2 * MIB;
            case HUGETLB_1G -> GIB;
            default -> 4 * KIB;
        };
        return lengthBytes / leafBytes;
    }

    @Test
    void shouldPriceA1MiBRegistrationInMicrosecondsAndA1GiBRegistrationInMilliseconds()
    {
        final RegistrationEvent small = register(MIB, Backing.BASE_PAGES);
        final RegistrationEvent large = register(GIB, Backing.BASE_PAGES);

        assertThat(small.durationNs()).isBetween(US, MS - 1);
        assertThat(large.durationNs()).isBetween(MS, S - 1);
        assertThat(small.pagesPinned()).isEqualTo(MIB / (4 * KIB));
        assertThat(large.pagesPinned()).isEqualTo(GIB / (4 * KIB));
    }

    @Test
    void shouldPriceEveryRegistrationFromItsCountsWithTheCostModel()
    {
        for (final Backing backing : List.of(Backing.BASE_PAGES, Backing.HUGETLB_2M, Backing.HUGETLB_1G))
        {
            final long length = backing == Backing.HUGETLB_1G ? GIB : 4 * MIB;
            final RegistrationEvent reg = register(length, backing);
            assertThat(reg.durationNs()).as("%s", backing).isEqualTo(
                costs.registrationNs(reg.pagesPinned(), leaves(length, backing), reg.mttEntries())
                    + costs.hostFaultsNs(lastFaultIns, 0));
        }
    }

    @Test
    void shouldMakeAColdRegistrationPayTheFaultInThatAWarmOneDoesNot()
    {
        // pin_user_pages faults in pages the process never touched (mm/gup.c faultin_page): each is a minor fault
        // that allocates and zeroes a page, priced at hostMinorFaultNs.
        final long cold = ctx.memory().allocate(4 * MIB, Backing.BASE_PAGES);
        final long warm = ctx.memory().allocate(4 * MIB, Backing.BASE_PAGES);
        final long beforeTouch = fabric.clock().nowNs();
        ctx.memory().write(warm, new byte[(int)(4 * MIB)]);
        final long touchNs = fabric.clock().nowNs() - beforeTouch;

        final long t0 = fabric.clock().nowNs();
        pd.regMr(cold, 4 * MIB, RuleRig.LOCAL);
        final long coldNs = fabric.clock().nowNs() - t0;
        final long t1 = fabric.clock().nowNs();
        pd.regMr(warm, 4 * MIB, RuleRig.LOCAL);
        final long warmNs = fabric.clock().nowNs() - t1;

        final long pages = 4 * MIB / (4 * KIB);
        assertThat(touchNs).as("the CPU's first touch of 1024 pages").isEqualTo(pages * costs.hostMinorFaultNs());
        assertThat(coldNs - warmNs).as("the cold registration's fault-in").isEqualTo(pages
            * costs.hostMinorFaultNs());
    }

    @Test
    void shouldRegisterAnOdpRangeOfAbsentPagesInNearlyConstantTime()
    {
        // mlx5 creates an ODP mkey with its entries zapped and the snapshot walk skips absent levels: registering
        // 1 GiB that is not present costs what registering 4 MiB does.
        final long small = ctx.memory().allocate(4 * MIB, Backing.BASE_PAGES);
        final long large = ctx.memory().allocate(GIB, Backing.BASE_PAGES);
        final java.util.Set<dev.rnicsim.verbs.Access> odp = java.util.EnumSet.of(
            dev.rnicsim.verbs.Access.LOCAL_WRITE, dev.rnicsim.verbs.Access.ON_DEMAND);

        final long t0 = fabric.clock().nowNs();
        pd.regMr(small, 4 * MIB, odp);
        final long smallNs = fabric.clock().nowNs() - t0;
        final long t1 = fabric.clock().nowNs();
        pd.regMr(large, GIB, odp);
        final long largeNs = fabric.clock().nowNs() - t1;

        assertThat(largeNs).isEqualTo(smallNs).isEqualTo(costs.regFixedNs());
    }

    @Test
    void shouldMakeHugePagesAtLeastTwiceCheaperToRegisterThanBasePages()
    {
        final RegistrationEvent base = register(GIB, Backing.BASE_PAGES);
        final RegistrationEvent huge2M = register(GIB, Backing.HUGETLB_2M);
        final RegistrationEvent huge1G = register(GIB, Backing.HUGETLB_1G);

        assertThat(huge2M.pagesPinned()).isEqualTo(base.pagesPinned());
        assertThat(huge1G.pagesPinned()).isEqualTo(base.pagesPinned());
        assertThat(huge2M.durationNs() * 2).isLessThanOrEqualTo(base.durationNs());
        assertThat(huge1G.durationNs() * 2).isLessThanOrEqualTo(base.durationNs());
        assertThat(huge1G.pageSizeBytes()).isEqualTo(GIB);
        assertThat(huge1G.mttEntries()).isEqualTo(1);
    }

    @Test
    void shouldMakeDeregCheaperThanRegAndPriceItWithTheCostModel()
    {
        final long addr = ctx.memory().allocate(64 * MIB, Backing.BASE_PAGES);
        final MemoryRegion mr = pd.regMr(addr, 64 * MIB, RuleRig.LOCAL);
        final long t = fabric.clock().nowNs();
        mr.close();

        final List<RegistrationEvent> trace = device.recentRegistrations();
        final RegistrationEvent reg = trace.get(trace.size() - 2);
        final RegistrationEvent dereg = trace.get(trace.size() - 1);
        assertThat(dereg.kind()).isEqualTo(RegistrationEvent.Kind.DEREG);
        assertThat(dereg.durationNs()).isPositive().isLessThan(reg.durationNs());
        assertThat(dereg.durationNs()).isEqualTo(costs.deregistrationNs(dereg.pagesPinned()));
        assertThat(fabric.clock().nowNs() - t).isEqualTo(dereg.durationNs());
    }

    @Test
    void shouldAdvanceTheClockMoreForATranslationCacheMissThanForAHit()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(64 * KIB);
        final long dst = rig.bufferB(64 * KIB);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 64 * KIB, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 64 * KIB, RuleRig.REMOTE_ALL);
        final SendWr write = SendWr.write(1, sgl(sge(srcMr, src + 10, 8 * KIB)), dst + 20, dstMr.rkey());

        final long missesBefore = misses(rig);
        final long t0 = rig.fabric.clock().nowNs();
        rig.qpA.postSend(write);
        rig.fabric.progressAll();
        final long t1 = rig.fabric.clock().nowNs();
        final long coldMisses = misses(rig) - missesBefore;
        rig.qpA.postSend(write);
        rig.fabric.progressAll();
        final long t2 = rig.fabric.clock().nowNs();
        final long warmMisses = misses(rig) - missesBefore - coldMisses;

        assertThat(rig.pollA()).extracting(WorkCompletion::status).containsExactly(WcStatus.SUCCESS,
            WcStatus.SUCCESS);
        assertThat(coldMisses).isPositive();
        assertThat(warmMisses).isLessThan(coldMisses);
        assertThat(t1 - t0).isGreaterThan(t2 - t1);
        assertThat((t1 - t0) - (t2 - t1)).as("the difference is the misses, priced by the cost model")
            .isEqualTo((coldMisses - warmMisses) * rig.fabric.costModel().cacheMissNs());
        assertThat(rig.deviceA.counter(SimCounter.TRANSLATION_CACHE_HITS)
            + rig.deviceB.counter(SimCounter.TRANSLATION_CACHE_HITS)).isPositive();
    }

    @Test
    void shouldPriceAnOperationWithTheCostModelFromItsPayloadAndMisses()
    {
        final RuleRig rig = RuleRig.connected();
        final long src = rig.bufferA(64 * KIB);
        final long dst = rig.bufferB(64 * KIB);
        final MemoryRegion srcMr = rig.pdA.regMr(src, 64 * KIB, RuleRig.LOCAL);
        final MemoryRegion dstMr = rig.pdB.regMr(dst, 64 * KIB, RuleRig.REMOTE_ALL);
        final long payload = 32 * KIB;

        final long missesBefore = misses(rig);
        final long t0 = rig.fabric.clock().nowNs();
        rig.qpA.postSend(SendWr.write(1, sgl(sge(srcMr, src, payload)), dst, dstMr.rkey()));
        rig.fabric.progressAll();
        final long elapsed = rig.fabric.clock().nowNs() - t0;

        assertThat(elapsed).isEqualTo(rig.fabric.costModel().operationNs(payload,
            rig.deviceA.profile().linkGbps(), misses(rig) - missesBefore));
    }

    private static long misses(final RuleRig rig)
    {
        return rig.deviceA.counter(SimCounter.TRANSLATION_CACHE_MISSES)
            + rig.deviceB.counter(SimCounter.TRANSLATION_CACHE_MISSES);
    }
}
