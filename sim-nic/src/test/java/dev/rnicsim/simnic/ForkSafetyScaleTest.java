package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.BasePage;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.MapFlag;
import dev.rnicsim.pagetable.PageSize;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.ThpMode;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.VmEvent;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Fork-safe registration at scale and its price: libibverbs madvises each registered range MADV_DONTFORK
 * (memory.c {@code ibv_madvise_range}), whose VMA split the kernel does around the range (mm/madvise.c
 * {@code madvise_update_vma}, mm/vma.c {@code vma_modify}), so many registrations cost operations linear in their
 * number, counted with {@code sim_vma_visits}; the cost model prices the calls, the splits and the page-size probes
 * of RDMAV_HUGEPAGES_SAFE ({@link CostModel#forkSafetyNs}). Also the page_size_cap intersection at registration on a
 * 16 KiB host (umem.c {@code ib_umem_find_best_pgsz}).
 */
class ForkSafetyScaleTest
{
    private static final long PAGE = 4096;
    private static final Set<Access> LOCAL = EnumSet.of(Access.LOCAL_WRITE);

    private final SimFabric fabric = new SimFabric();

    private SimContext open(final HostConfig config, final String... env)
    {
        final SimHost host = fabric.addHost("h" + fabric.hosts().size(), config);
        final SimDevice device = host.addDevice("sim:" + host.name() + "/dev0", DeviceProfiles.connectx5());
        final UserProcess p = host.host().spawn("app");
        p.rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        for (int i = 0; i < env.length; i += 2)
        {
            p.setenv(env[i], env[i + 1]);
        }
        return device.open(p);
    }

    /** @return the VMAs visited by the last of {@code n} fork-safe registrations, each of its own page. */
    private long visitsOfTheLastRegistrationOf(final int n)
    {
        final SimContext c = open(HostConfig.builder().physicalMemoryBytes(256L << 20)
            .forkBehaviour(ForkBehaviour.LEGACY).build(), "RDMAV_FORK_SAFE", "1");
        final ProtectionDomain pd = c.allocPd();
        final long heap = c.process().mmapAnonymous(2L * n * PAGE);
        long last = 0;
        for (int i = 0; i < n; i++)
        {
            final long before = c.process().host().counter(VmEvent.VMA_VISITS);
            pd.regMr(heap + 2L * i * PAGE, PAGE, LOCAL);
            last = c.process().host().counter(VmEvent.VMA_VISITS) - before;
        }
        assertThat(c.process().vmaCount()).isEqualTo(2 * n);
        return last;
    }

    @Test
    void theThousandthForkSafeRegistrationTouchesNoMoreVmasThanTheHundredth()
    {
        final long hundred = visitsOfTheLastRegistrationOf(100);
        final long thousands = visitsOfTheLastRegistrationOf(4000);

        assertThat(thousands).isEqualTo(hundred);
        assertThat(thousands).isLessThan(30);
    }

    @Test
    void madviseWorkIsPricedAsItsOwnSpanOfTheRegistration()
    {
        final CostModel cost = fabric.costModel();
        final SimContext c = open(HostConfig.builder().physicalMemoryBytes(256L << 20)
            .forkBehaviour(ForkBehaviour.LEGACY).build(), "RDMAV_FORK_SAFE", "1");
        final ProtectionDomain pd = c.allocPd();
        final long heap = c.process().mmapAnonymous(16 * PAGE);
        final ForkSafety fork = c.device().host().forkSafety(c.process());
        final java.util.List<TraceEvent> spans = new java.util.ArrayList<>();
        fabric.addTraceListener(spans::add);

        pd.regMr(heap + 4 * PAGE, PAGE, LOCAL);

        // One MADV_DONTFORK in the middle of one VMA: two VMAs more.
        assertThat(fork.vmaChanges()).isEqualTo(2);
        final long expected = cost.madviseCallNs() + 2 * cost.vmaSplitNs();
        assertThat(fork.workNs(cost)).isEqualTo(expected);
        assertThat(spans).filteredOn(e -> e.name().equals("madvise")).singleElement()
            .satisfies(e -> assertThat(e.durationNs()).isEqualTo(expected));
    }

    @Test
    void aQueueRingsMadviseIsPricedAsASpanOfItsCreation()
    {
        // mlx5_alloc_buf -> ibv_dontfork_range: the CQ ring is madvised like an MR.
        final CostModel cost = fabric.costModel();
        final SimContext c = open(HostConfig.builder().physicalMemoryBytes(256L << 20)
            .forkBehaviour(ForkBehaviour.LEGACY).build(), "RDMAV_FORK_SAFE", "1");
        final ForkSafety fork = c.device().host().forkSafety(c.process());
        final java.util.List<TraceEvent> spans = new java.util.ArrayList<>();
        fabric.addTraceListener(spans::add);

        c.createCq(16);

        assertThat(fork.dontforkCalls()).isEqualTo(1);
        assertThat(spans).filteredOn(e -> e.name().equals("madvise")).singleElement()
            .satisfies(e -> assertThat(e.durationNs()).isEqualTo(fork.workNs(cost)).isPositive());
    }

    @Test
    void hugepagesSafeAddsOneProbeAMadvisedRange()
    {
        final CostModel cost = fabric.costModel();
        final SimContext c = open(HostConfig.builder().physicalMemoryBytes(256L << 20)
            .forkBehaviour(ForkBehaviour.LEGACY).build(), "RDMAV_FORK_SAFE", "1", "RDMAV_HUGEPAGES_SAFE", "1");
        final ProtectionDomain pd = c.allocPd();
        final long heap = c.process().mmapAnonymous(16 * PAGE);
        final ForkSafety fork = c.device().host().forkSafety(c.process());

        final MemoryRegion mr = pd.regMr(heap, 16 * PAGE, LOCAL);
        mr.close();

        assertThat(fork.pageSizeProbes()).isEqualTo(2);
        assertThat(fork.workNs(cost)).isEqualTo(2 * cost.madviseCallNs() + 2 * cost.hugepagesSafeProbeNs());
    }

    @Test
    void a32MibThpOfA16KibHostIsOneMttEntryOnMlx5()
    {
        final SimContext c = open(HostConfig.builder().physicalMemoryBytes(512L << 20).basePage(BasePage.SIZE_16K)
            .thpMode(ThpMode.ALWAYS).build());
        final ProtectionDomain pd = c.allocPd();
        final long va = c.process().mmap(0, 32L << 20, Prot.READ_WRITE, Set.of(MapFlag.PRIVATE, MapFlag.ANONYMOUS));
        c.process().touch(va, 32L << 20, true);
        assertThat(c.process().mappedPageSize(va)).isEqualTo(PageSize.SIZE_32M);

        final SimMr mr = (SimMr)pd.regMr(va, 32L << 20, LOCAL);

        assertThat(mr.pageSizeBytes()).isEqualTo(32L << 20);
        assertThat(mr.mttEntries()).isEqualTo(1);
        assertThat(mr.pinnedPages()).isEqualTo((32L << 20) / (16 << 10));
    }
}
