package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.MttConfig;
import dev.rnicsim.pagetable.PhysicalMemory;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Backing;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.VerbsException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * Random sequences of registrations and deregistrations on one PD (with a CQ and a QP whose rings are pinned too):
 * {@code pinned_vm} always equals the rings plus the pages of the live MRs, each frame's pin count equals the live
 * MRs covering it, the device counters agree, and a failed registration changes nothing but the failure counter.
 */
class RuleRegistrationProperties
{
    private static final long PAGE = 4096;
    private static final int BUFFERS = 4;
    private static final long BUFFER_BYTES = 64 * PAGE;
    private static final List<Access> FLAGS = List.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC, Access.MW_BIND, Access.ZERO_BASED, Access.RELAXED_ORDERING);
    /** EOVERFLOW: an ON_DEMAND range that wraps past 2^64 (ib_init_umem_odp: check_add_overflow). */
    private static final Set<Errno> REGISTRATION_ERRNOS = EnumSet.of(Errno.EINVAL, Errno.ENOMEM, Errno.EFAULT,
        Errno.EPERM, Errno.EOPNOTSUPP, Errno.EOVERFLOW);

    /** One step of a sequence. */
    sealed interface Op permits Reg, Dereg
    {
    }

    /**
     * @param buffer   which of the buffers (the last one is unmapped).
     * @param offset   first byte within it.
     * @param length   bytes to register.
     * @param access   rights asked for.
     * @param iovaMode 0: plain reg_mr; 1: iova shifted by whole pages; 2: iova with another page offset.
     */
    record Reg(int buffer, long offset, long length, Set<Access> access, int iovaMode) implements Op
    {
    }

    /**
     * @param pick which live MR (modulo their number) to deregister.
     */
    record Dereg(int pick) implements Op
    {
    }

    @Provide
    Arbitrary<DeviceProfile> profiles()
    {
        return Arbitraries.of(DeviceProfiles.connectx3().withMtt(MttConfig.buddy(5, 3)), DeviceProfiles.connectx5(),
            DeviceProfiles.rxe(), DeviceProfiles.e810());
    }

    @Provide
    Arbitrary<List<Op>> ops()
    {
        final Arbitrary<Long> lengths = Arbitraries.frequencyOf(Tuple.of(20, Arbitraries.longs().between(1,
            BUFFER_BYTES)), Tuple.of(3, Arbitraries.longs().between(BUFFER_BYTES, 2 * BUFFER_BYTES)),
            Tuple.of(1, Arbitraries.of(0L, -1L, Long.MAX_VALUE, 1L << 46)));
        final Arbitrary<Set<Access>> access = Combinators.combine(Arbitraries.subsetOf(FLAGS),
            Arbitraries.frequency(Tuple.of(19, false), Tuple.of(1, true))).as((flags, odp) ->
            {
                final Set<Access> set = flags.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(flags);
                if (odp)
                {
                    set.add(Access.ON_DEMAND);
                }
                return set;
            });
        final Arbitrary<Op> reg = Combinators.combine(Arbitraries.integers().between(0, BUFFERS - 1),
            Arbitraries.longs().between(0, BUFFER_BYTES - 1), lengths, access,
            Arbitraries.frequency(Tuple.of(8, 0), Tuple.of(1, 1), Tuple.of(1, 2)))
            .as((b, o, l, a, i) -> (Op)new Reg(b, o, l, a, i));
        final Arbitrary<Op> dereg = Arbitraries.integers().between(0, 31).map(Dereg::new);
        return Arbitraries.frequencyOf(Tuple.of(3, reg), Tuple.of(2, dereg)).list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 300)
    void shouldKeepPinnedVmEqualToRingsPlusLiveMrsAndLeaveEverythingUnchangedWhenARegistrationFails(
        @ForAll("profiles") final DeviceProfile profile, @ForAll("ops") final List<Op> ops,
        @ForAll @IntRange(min = 2, max = 24) final int maxMr, @ForAll final boolean capIpcLock)
    {
        final SimFabric fabric = new SimFabric();
        final SimHost host = fabric.addHost("h", RuleRig.host(1L << 30, 0, 0));
        final SimDevice device = host.addDevice("dev0",
            profile.withAttributes(profile.attributes().toBuilder().maxMr(maxMr).build()));
        final UserProcess process = host.host().spawn("app").rlimitMemlockBytes(512 * 1024).capIpcLock(capIpcLock);
        final SimContext ctx = device.open(process);
        final ProtectionDomain pd = ctx.allocPd();
        final CompletionQueue cq = ctx.createCq(32);
        pd.createQp(QpInitAttr.rc(cq));
        final long ringPages = process.pinnedVmPages();
        assertThat(ringPages).isPositive();
        final long[] buffers = new long[BUFFERS];
        for (int i = 0; i < BUFFERS; i++)
        {
            buffers[i] = ctx.memory().allocate(BUFFER_BYTES, Backing.BASE_PAGES);
            process.touch(buffers[i], BUFFER_BYTES, true);
        }
        ctx.memory().free(buffers[BUFFERS - 1], BUFFER_BYTES);
        final List<SimMr> live = new ArrayList<>();

        for (final Op op : ops)
        {
            switch (op)
            {
                case Reg r -> register(device, process, pd, buffers, live, r);
                case Dereg d ->
                {
                    if (!live.isEmpty())
                    {
                        live.remove(d.pick() % live.size()).close();
                    }
                }
            }
            assertInvariants(device, process, host.host().physicalMemory(), buffers, live, ringPages);
        }

        for (final SimMr mr : live)
        {
            mr.close();
        }
        assertThat(process.pinnedVmPages()).isEqualTo(ringPages);
        assertThat(device.counter(SimCounter.MR_LIVE)).isZero();
        assertThat(device.counter(SimCounter.MTT_ENTRIES_IN_USE)).isZero();
        ctx.close();
        assertThat(process.pinnedVmPages()).isZero();
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isZero();
    }

    private static void register(final SimDevice device, final UserProcess process, final ProtectionDomain pd,
        final long[] buffers, final List<SimMr> live, final Reg r)
    {
        final long addr = buffers[r.buffer()] + r.offset();
        final long iova = switch (r.iovaMode())
        {
            case 1 -> addr + 3 * PAGE;
            case 2 -> addr + 8;
            default -> addr;
        };
        final Map<String, Long> countersBefore = device.counters();
        final List<RegistrationEvent> traceBefore = device.recentRegistrations();
        final long pinnedBefore = process.pinnedVmPages();
        final int mrsBefore = ((SimPd)pd).memoryRegions().size();
        try
        {
            final MemoryRegion mr = r.iovaMode() == 0 ? pd.regMr(addr, r.length(), r.access())
                : pd.regMr(addr, r.length(), iova, r.access());
            if (mr instanceof SimOdpMr odp)
            {
                // An ODP MR pins nothing; it is deregistered at once so the pin invariants below stay exact.
                assertThat(r.access()).contains(Access.ON_DEMAND);
                assertThat(device.profile().attributes().odpCaps().supported()).isTrue();
                assertThat(process.pinnedVmPages()).isEqualTo(pinnedBefore);
                odp.close();
                return;
            }
            final long pages = ((addr + r.length() + PAGE - 1) / PAGE) - addr / PAGE;
            assertThat(((SimMr)mr).pinnedPages()).isEqualTo(pages);
            assertThat(process.pinnedVmPages()).isEqualTo(pinnedBefore + pages);
            assertThat(r.iovaMode()).as("a page-offset mismatch is never accepted").isNotEqualTo(2);
            assertThat(r.access()).as("an ON_DEMAND registration gives an ODP MR").doesNotContain(Access.ON_DEMAND);
            if (r.access().contains(Access.REMOTE_WRITE) || r.access().contains(Access.REMOTE_ATOMIC))
            {
                assertThat(r.access()).contains(Access.LOCAL_WRITE);
            }
            live.add((SimMr)mr);
        }
        catch (final VerbsException e)
        {
            assertThat(e.errnoName()).isIn(REGISTRATION_ERRNOS);
            final Map<String, Long> countersAfter = device.counters();
            final String failures = SimCounter.MR_REGISTRATION_FAILURES.label();
            assertThat(countersAfter.get(failures)).isEqualTo(countersBefore.get(failures) + 1);
            countersAfter.remove(failures);
            countersBefore.remove(failures);
            assertThat(countersAfter).as("counters after %s failed with %s", r, e.getMessage())
                .isEqualTo(countersBefore);
            assertThat(device.recentRegistrations()).isEqualTo(traceBefore);
            assertThat(process.pinnedVmPages()).isEqualTo(pinnedBefore);
            assertThat(((SimPd)pd).memoryRegions()).hasSize(mrsBefore);
        }
    }

    private static void assertInvariants(final SimDevice device, final UserProcess process, final PhysicalMemory ram,
        final long[] buffers, final List<SimMr> live, final long ringPages)
    {
        long mrPages = 0;
        long mttReserved = 0;
        for (final SimMr mr : live)
        {
            mrPages += mr.pinnedPages();
            mttReserved += mr.mttEntriesReserved();
        }
        assertThat(process.pinnedVmPages()).isEqualTo(ringPages + mrPages);
        assertThat(device.counter(SimCounter.PINNED_BYTES)).isEqualTo((ringPages + mrPages) * PAGE);
        assertThat(device.counter(SimCounter.MR_LIVE)).isEqualTo(live.size());
        assertThat(device.counter(SimCounter.MTT_ENTRIES_IN_USE)).isEqualTo(mttReserved);
        for (int b = 0; b < BUFFERS - 1; b++)
        {
            for (long va = buffers[b]; va < buffers[b] + BUFFER_BYTES; va += PAGE)
            {
                int covering = 0;
                for (final SimMr mr : live)
                {
                    final long first = mr.addr() & -PAGE;
                    if (va >= first && va < mr.addr() + mr.lengthBytes())
                    {
                        covering++;
                    }
                }
                final long pfn = process.translate(va) >>> PhysicalMemory.FRAME_SHIFT;
                assertThat(ram.pinCount(pfn)).as("pin count behind 0x%x", va).isEqualTo(covering);
            }
        }
    }
}
