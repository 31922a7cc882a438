package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.HostConfig;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.pagetable.Vma;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The reference count of libibverbs' fork support (rdma-core libibverbs/memory.c {@code ibv_madvise_range}) over any
 * sequence of overlapping registrations and deregistrations: a page some live MR covers is VM_DONTCOPY, a page none
 * covers is not unless a MADV_DOFORK was refused past {@code vm.max_map_count} (which {@code do_madvise} ignores),
 * a refused registration changes nothing, and when every MR is gone and no DOFORK was refused the buffer is one VMA
 * again.
 */
class ForkSafetyProperties
{
    private static final long PAGE = 4096;
    private static final int PAGES = 24;

    /**
     * @param steps each step registers [first, first + pages) when it is at least 0, or deregisters the live MR
     *              numbered {@code -step - 1} modulo the live count.
     * @param limit vm.max_map_count of the host.
     */
    @Property(tries = 60)
    void dontcopyPagesAreExactlyThePagesOfLiveMrs(
        @ForAll @Size(min = 1, max = 30) final List<@IntRange(min = -8, max = PAGES * 8 - 1) Integer> steps,
        @ForAll @IntRange(min = 4, max = 40) final int limit)
    {
        final SimHost host = new SimFabric().addHost("h", HostConfig.builder().physicalMemoryBytes(64L << 20)
            .forkBehaviour(ForkBehaviour.LEGACY).maxMapCount(limit).build());
        final UserProcess p = host.host().spawn("app").rlimitMemlockBytes(UserProcess.RLIM_INFINITY);
        p.setenv("RDMAV_FORK_SAFE", "1");
        final SimContext c = host.addDevice("sim:h/dev0", DeviceProfiles.connectx5()).open(p);
        final ProtectionDomain pd = c.allocPd();
        final long buf = p.mmapAnonymous(PAGES * PAGE);
        final List<long[]> ranges = new ArrayList<>();
        final List<MemoryRegion> live = new ArrayList<>();
        for (final int step : steps)
        {
            if (step >= 0 || live.isEmpty())
            {
                final int first = Math.abs(step) % PAGES;
                final int pages = 1 + Math.abs(step) / PAGES % (PAGES - first);
                final int vmasBefore = p.vmaCount();
                try
                {
                    live.add(pd.regMr(buf + first * PAGE, pages * PAGE, EnumSet.of(Access.LOCAL_WRITE)));
                    ranges.add(new long[] {first, first + pages});
                }
                catch (final VerbsException e)
                {
                    assertThat(p.vmaCount()).as("a refused registration changes no VMA").isEqualTo(vmasBefore);
                }
            }
            else
            {
                final int i = (-step - 1) % live.size();
                live.remove(i).close();
                ranges.remove(i);
            }
            assertThat(p.vmaCount()).isLessThanOrEqualTo(limit);
            for (int page = 0; page < PAGES; page++)
            {
                final int at = page;
                final boolean covered = ranges.stream().anyMatch(r -> r[0] <= at && at < r[1]);
                final boolean dontcopy = p.vmaAt(buf + page * PAGE).has(Vma.VM_DONTCOPY);
                if (covered || host.forkSafety(p).refusedDoforks() == 0)
                {
                    assertThat(dontcopy).as("page %d", page).isEqualTo(covered);
                }
                assertThat(host.forkSafety(p).referenceCount(buf + page * PAGE))
                    .isEqualTo((int)ranges.stream().filter(r -> r[0] <= at && at < r[1]).count());
            }
        }
        for (final MemoryRegion mr : live)
        {
            mr.close();
        }
        assertThat(host.forkSafety(p).dontforkBytes()).isZero();
        if (host.forkSafety(p).refusedDoforks() == 0)
        {
            assertThat(p.vmaCount()).isEqualTo(1);
        }
    }
}
