package dev.rnicsim.simnic;

import static dev.rnicsim.simnic.OdpRig.GIB;
import static dev.rnicsim.simnic.OdpRig.PAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.pagetable.Prot;
import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WcStatus;
import dev.rnicsim.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import net.jqwik.api.statistics.Statistics;

/**
 * Random sequences of device accesses and host memory operations on a 16-page region of host b's process that ODP
 * MRs cover: remote WRITEs and READs through the QP at random offsets, CPU writes, munmap and mmap again,
 * MADV_DONTNEED, mprotect read-only and back, fork with writes by the children, reclaim, compaction and
 * ibv_advise_mr prefetches, and deregistering an MR and registering it again (its snapshot maps what is present
 * then, read-only pages included). The region straddles a 1 GiB boundary, so an implicit MR needs two children for it.
 *
 * <p>A model keeps the bytes and the VMA state of every page of the region, in the parent and in each child. Each
 * remote access must succeed exactly when its faults can be resolved (every page from the first one the device
 * cannot reach has a VMA, a writable one when the MR is writable, since the device then asks for write access),
 * and fail with IBV_WC_REM_ACCESS_ERR otherwise; a READ must return the model's bytes and a WRITE must land.
 * After every step: every page an MR maps on the device points at the frame the process maps at that address now,
 * the device may write only where the MR is writable and the CPU mapping is writable, and every present page of
 * the parent and of each child holds the model's bytes.
 */
class OdpMappingProperties
{
    private static final int PAGES = 16;
    private static final long REGION = PAGES * PAGE;
    /** The region's first byte: eight pages below a 1 GiB boundary. */
    private static final long BASE = 0x4000_0000_0000L + GIB - 8 * PAGE;
    /** The read-only MR covers pages 4 to 11 at this iova. */
    private static final long RO_IOVA = 0x20_0000_0000L;
    private static final int RO_FIRST_PAGE = 4;
    private static final int RO_PAGES = 8;
    private static final int MAX_CHILDREN = 2;
    private static final int MAX_ACCESS = 3 * (int)PAGE;

    @Property(tries = 200)
    void explicitOdpMrsFollowThePageTable(@ForAll("explicitChains") final ActionChain<World> chain)
    {
        runWithStatistics(chain);
    }

    @Property(tries = 200)
    void anImplicitOdpMrFollowsThePageTable(@ForAll("implicitChains") final ActionChain<World> chain)
    {
        runWithStatistics(chain);
    }

    /**
     * Runs the chain, then records what it did; the coverage checks guard against a generator whose accesses all
     * fail, or that never makes the device fault or invalidate. Recorded also when the chain fails, so that the
     * report always has entries and shows the failure.
     */
    private static void runWithStatistics(final ActionChain<World> chain)
    {
        try
        {
            chain.withInvariant("device translations and memory agree with the host", World::check).run();
        }
        finally
        {
            final World end = chain.finalState().orElse(null);
            Statistics.label("remote accesses mostly succeed").collect(end != null && end.remoteOk > 0
                && end.remoteOk >= end.remoteRefused);
            Statistics.label("a remote access was refused").collect(end != null && end.remoteRefused > 0);
            Statistics.label("the device faulted").collect(end != null
                && end.rig.counterB(SimCounter.ODP_PAGE_FAULTS) > 0);
            Statistics.label("the device was invalidated").collect(end != null
                && end.rig.counterB(SimCounter.ODP_PAGE_INVALIDATIONS) > 0);
        }
        Statistics.label("remote accesses mostly succeed").coverage(c -> c.check(true).percentage(p -> p >= 50));
        Statistics.label("a remote access was refused").coverage(c -> c.check(true).percentage(p -> p >= 10));
        Statistics.label("the device faulted").coverage(c -> c.check(true).percentage(p -> p >= 50));
        Statistics.label("the device was invalidated").coverage(c -> c.check(true).percentage(p -> p >= 50));
    }

    @Provide
    Arbitrary<ActionChain<World>> explicitChains()
    {
        return chains(false);
    }

    @Provide
    Arbitrary<ActionChain<World>> implicitChains()
    {
        return chains(true);
    }

    private static Arbitrary<ActionChain<World>> chains(final boolean implicit)
    {
        return ActionChain.startWith(() -> new World(implicit))
            .withAction(8, new RemoteWrite())
            .withAction(8, new RemoteRead())
            .withAction(2, new CpuWrite())
            .withAction(2, new Munmap())
            .withAction(2, new Mmap())
            .withAction(2, new DontNeed())
            .withAction(2, new Mprotect())
            .withAction(1, new Fork())
            .withAction(2, new ChildWrite())
            .withAction(2, new Reclaim())
            .withAction(1, new Compact())
            .withAction(3, new Advise())
            .withAction(1, new Reregister())
            .withMaxTransformations(40);
    }

    // ------------------------------------------------------------------ the system and its model

    /** An ODP MR over (part of) the region. */
    record Target(String name, SimOdpMr mr, long firstVa, long endVa, boolean writable)
    {
        long iovaOf(final long va)
        {
            return mr.isImplicit() ? va : mr.iova() + (va - mr.addr());
        }

        long vaOf(final long iova)
        {
            return mr.isImplicit() ? iova : mr.addr() + (iova - mr.iova());
        }
    }

    /** The model of the region in one process: VMA present, VMA writable, and the bytes. */
    static final class Image
    {
        final UserProcess process;
        final boolean[] mapped = new boolean[PAGES];
        final boolean[] writable = new boolean[PAGES];
        final byte[] bytes = new byte[(int)REGION];

        Image(final UserProcess process)
        {
            this.process = process;
        }

        Image copyFor(final UserProcess child)
        {
            final Image c = new Image(child);
            System.arraycopy(mapped, 0, c.mapped, 0, PAGES);
            System.arraycopy(writable, 0, c.writable, 0, PAGES);
            System.arraycopy(bytes, 0, c.bytes, 0, bytes.length);
            return c;
        }

        boolean all(final long va, final long length, final boolean needWritable)
        {
            for (int p = page(va); p <= page(va + length - 1); p++)
            {
                if (!mapped[p] || needWritable && !writable[p])
                {
                    return false;
                }
            }
            return true;
        }

        byte[] expected(final long va, final int length)
        {
            final int off = (int)(va - BASE);
            return Arrays.copyOfRange(bytes, off, off + length);
        }

        void store(final long va, final byte[] data)
        {
            System.arraycopy(data, 0, bytes, (int)(va - BASE), data.length);
        }

        void zero(final int firstPage, final int pages)
        {
            Arrays.fill(bytes, firstPage * (int)PAGE, (firstPage + pages) * (int)PAGE, (byte)0);
        }

        /** Every present page of the region holds the model's bytes; pages without a VMA are not present. */
        void check(final String who)
        {
            final byte[] frame = new byte[(int)PAGE];
            for (int p = 0; p < PAGES; p++)
            {
                final long va = BASE + p * PAGE;
                final long phys = process.translate(va);
                if (!mapped[p])
                {
                    assertThat(phys).as("%s page %d has no VMA but is present", who, p).isEqualTo(-1);
                    assertThat(process.vmaAt(va)).as("%s page %d VMA", who, p).isNull();
                    continue;
                }
                assertThat(process.vmaAt(va)).as("%s page %d VMA", who, p).isNotNull();
                if (phys >= 0)
                {
                    process.host().physicalMemory().read(phys, frame, 0, frame.length);
                    assertThat(frame).as("%s page %d bytes", who, p).isEqualTo(expected(va, (int)PAGE));
                }
            }
        }
    }

    static int page(final long va)
    {
        return (int)((va - BASE) / PAGE);
    }

    static final class World
    {
        final OdpRig rig;
        final Image parent;
        final List<Image> children = new ArrayList<>();
        final List<Target> targets = new ArrayList<>();
        int seed = 1;
        int remoteOk;
        int remoteRefused;

        World(final boolean implicit)
        {
            // rnr_retry 6 rather than unlimited: a fault that never settles fails the step instead of looping.
            rig = OdpRig.connectx5(6, 12);
            parent = new Image(rig.processB());
            rig.mapFixedB(BASE, REGION);
            Arrays.fill(parent.mapped, true);
            Arrays.fill(parent.writable, true);
            // Pages 0-5 written, 6-9 read (the zero page), 10-15 untouched.
            final byte[] written = OdpRig.pattern(6 * (int)PAGE, 0);
            rig.processB().write(BASE, written);
            parent.store(BASE, written);
            rig.processB().touch(BASE + 6 * PAGE, 4 * PAGE, false);
            targets.add(register("rw"));
            targets.add(register(implicit ? "implicit" : "ro"));
        }

        /** Registers the MR of that name anew: its snapshot maps the pages present now. */
        Target register(final String name)
        {
            return switch (name)
            {
                case "rw" -> new Target(name, rig.odpB(BASE, REGION, OdpRig.ODP_RW), BASE, BASE + REGION, true);
                case "implicit" -> new Target(name, (SimOdpMr)rig.pdB.regMr(0, -1L, OdpRig.ODP_RW), BASE,
                    BASE + REGION, true);
                default ->
                {
                    final long first = BASE + RO_FIRST_PAGE * PAGE;
                    yield new Target(name, (SimOdpMr)rig.pdB.regMr(first, RO_PAGES * PAGE, RO_IOVA,
                        OdpRig.ODP_RO), first, first + RO_PAGES * PAGE, false);
                }
            };
        }

        void reregister(final int targetIndex)
        {
            final int i = targetIndex % targets.size();
            final Target old = targets.get(i);
            final int notifiers = rig.processB().intervalNotifierCount();
            old.mr().close();
            if (!old.mr().isImplicit())
            {
                assertThat(rig.processB().intervalNotifierCount()).as("dereg removes the MR's notifier")
                    .isEqualTo(notifiers - 1);
            }
            targets.set(i, register(old.name()));
        }

        AdapterTables tables()
        {
            return rig.deviceB.tables();
        }

        /** {lo, length}: the range starting at fraction {@code start} of the target, clipped to it. */
        static long[] within(final Target t, final double start, final int length)
        {
            final long span = t.endVa() - t.firstVa();
            final long lo = t.firstVa() + Math.min(span - 1, (long)(start * span));
            return new long[] {lo, Math.min(length, t.endVa() - lo)};
        }

        /** True when the faults an access of [va, va + length) through t would take can be resolved. */
        boolean resolvable(final Target t, final long va, final long length, final boolean write)
        {
            final long missing = tables().firstUnmapped(t.mr().lkey(), t.iovaOf(va), length, write);
            if (missing < 0)
            {
                return true;
            }
            final long from = t.vaOf(missing);
            return parent.all(from, va + length - from, t.writable());
        }

        void remoteWrite(final int targetIndex, final double start, final int length)
        {
            final Target t = writableTargets().get(targetIndex % writableTargets().size());
            final long[] r = within(t, start, length);
            final byte[] data = OdpRig.pattern((int)r[1], seed++);
            final boolean ok = resolvable(t, r[0], r[1], true);
            final long placed = ok ? r[1] : placedBefore(t, r[0], r[1]);

            final WorkCompletion wc = rig.write(data, t.iovaOf(r[0]), t.mr().rkey());

            if (ok)
            {
                assertThat(wc.status()).as("WRITE through %s of 0x%s+%d", t.name(), Long.toHexString(r[0]), r[1])
                    .isEqualTo(WcStatus.SUCCESS);
                parent.store(r[0], data);
                assertThat(rig.processB().read(r[0], data.length)).as("the WRITE landed").isEqualTo(data);
                remoteOk++;
            }
            else
            {
                // The WRITE moves in packets of the path MTU: the packet that meets the first page the device has
                // no translation for takes the fault, which fails; the packets before it landed (partial data, as
                // for pinned memory).
                if (placed > 0)
                {
                    parent.store(r[0], Arrays.copyOf(data, (int)placed));
                }
                refused(wc, "WRITE", t, r);
            }
        }

        void remoteRead(final int targetIndex, final double start, final int length)
        {
            final Target t = targets.get(targetIndex % targets.size());
            final long[] r = within(t, start, length);
            final boolean ok = resolvable(t, r[0], r[1], false);

            final WorkCompletion wc = rig.read(t.iovaOf(r[0]), (int)r[1], t.mr().rkey());

            if (ok)
            {
                assertThat(wc.status()).as("READ through %s of 0x%s+%d", t.name(), Long.toHexString(r[0]), r[1])
                    .isEqualTo(WcStatus.SUCCESS);
                final byte[] got = rig.scratchBytes((int)r[1]);
                assertThat(got).as("READ returns the model's bytes").isEqualTo(parent.expected(r[0], (int)r[1]));
                assertThat(got).as("READ returns the CPU's bytes").isEqualTo(rig.processB().read(r[0], (int)r[1]));
                remoteOk++;
            }
            else
            {
                refused(wc, "READ", t, r);
            }
        }

        /**
         * Bytes of a WRITE of [va, va + length) through t placed by its packets (of the path MTU) before the packet
         * that meets the first block the device cannot write now.
         */
        long placedBefore(final Target t, final long va, final long length)
        {
            final long missing = tables().firstUnmapped(t.mr().lkey(), t.iovaOf(va), length, true);
            final long before = missing < 0 ? length : t.vaOf(missing) - va;
            return before / SimQp.PATH_MTU_BYTES * SimQp.PATH_MTU_BYTES;
        }

        private void refused(final WorkCompletion wc, final String op, final Target t, final long[] r)
        {
            assertThat(wc.status()).as("%s through %s of 0x%s+%d over a hole or a read-only page", op, t.name(),
                Long.toHexString(r[0]), r[1]).isEqualTo(WcStatus.REM_ACCESS_ERR);
            rig.reconnect();
            remoteRefused++;
        }

        List<Target> writableTargets()
        {
            return targets.stream().filter(Target::writable).toList();
        }

        void cpuWrite(final double start, final int length)
        {
            final long va = BASE + Math.min(REGION - 1, (long)(start * REGION));
            final int len = (int)Math.min(length, BASE + REGION - va);
            if (!parent.all(va, len, true))
            {
                return;
            }
            final byte[] data = OdpRig.pattern(len, seed++);
            rig.processB().write(va, data);
            parent.store(va, data);
        }

        void munmap(final int first, final int pages)
        {
            final int n = Math.min(pages, PAGES - first);
            rig.processB().munmap(BASE + first * PAGE, n * PAGE);
            for (int p = first; p < first + n; p++)
            {
                parent.mapped[p] = false;
                parent.writable[p] = false;
            }
            parent.zero(first, n);
        }

        void mmap(final int first, final int pages)
        {
            final int n = Math.min(pages, PAGES - first);
            rig.mapFixedB(BASE + first * PAGE, n * PAGE);
            for (int p = first; p < first + n; p++)
            {
                parent.mapped[p] = true;
                parent.writable[p] = true;
            }
            parent.zero(first, n);
        }

        void dontNeed(final int first, final int pages)
        {
            final int n = Math.min(pages, PAGES - first);
            if (!parent.all(BASE + first * PAGE, n * PAGE, false))
            {
                return;
            }
            rig.processB().madvise(BASE + first * PAGE, n * PAGE, Madvice.DONTNEED);
            parent.zero(first, n);
        }

        void mprotect(final int first, final int pages, final boolean writable)
        {
            final int n = Math.min(pages, PAGES - first);
            if (!parent.all(BASE + first * PAGE, n * PAGE, false))
            {
                return;
            }
            rig.processB().mprotect(BASE + first * PAGE, n * PAGE, writable ? Prot.READ_WRITE : Set.of(Prot.READ));
            for (int p = first; p < first + n; p++)
            {
                parent.writable[p] = writable;
            }
        }

        void fork()
        {
            if (children.size() == MAX_CHILDREN)
            {
                children.remove(0).process.exit();
            }
            children.add(parent.copyFor(rig.processB().fork("child")));
        }

        void childWrite(final int childIndex, final double start, final int length)
        {
            if (children.isEmpty())
            {
                return;
            }
            final Image child = children.get(childIndex % children.size());
            final long va = BASE + Math.min(REGION - 1, (long)(start * REGION));
            final int len = (int)Math.min(length, BASE + REGION - va);
            if (!child.all(va, len, true))
            {
                return;
            }
            final byte[] data = OdpRig.pattern(len, seed++);
            child.process.write(va, data);
            child.store(va, data);
        }

        void reclaim(final int pages)
        {
            rig.processB().host().reclaim(pages);
        }

        void compact()
        {
            rig.processB().host().compact();
        }

        /** Prefetches name the writable MRs: the read-only one refuses PREFETCH_WRITE, and a prefetch at another
         * iova is a rule of OdpRulesTest. */
        void advise(final MrAdvice advice, final boolean flush, final int targetIndex, final double start,
            final int length)
        {
            final Target t = writableTargets().get(targetIndex % writableTargets().size());
            final long[] r = within(t, start, length);
            final boolean fault = advice != MrAdvice.PREFETCH_NO_FAULT;
            final boolean fails = fault && !parent.all(r[0], r[1], advice == MrAdvice.PREFETCH_WRITE);

            final Throwable thrown = catchThrowable(() -> rig.pdB.adviseMr(advice, flush ? MrAdvice.FLAG_FLUSH : 0,
                List.of(new Sge(t.iovaOf(r[0]), r[1], t.mr().lkey()))));

            if (fails)
            {
                if (flush)
                {
                    assertThat(thrown).as("flushed %s over a hole", advice).isInstanceOf(VerbsException.class);
                    assertThat(((VerbsException)thrown).errnoName()).isEqualTo(Errno.EFAULT);
                }
                else
                {
                    assertThat(thrown).as("an unflushed prefetch is best effort").isNull();
                }
                return;
            }
            assertThat(thrown).as("%s through %s of 0x%s+%d", advice, t.name(), Long.toHexString(r[0]), r[1])
                .isNull();
            for (long va = r[0] & ~(PAGE - 1); va < r[0] + r[1]; va += PAGE)
            {
                final long iova = Math.max(t.iovaOf(va), t.iovaOf(r[0]));
                if (advice == MrAdvice.PREFETCH_WRITE)
                {
                    assertThat(tables().firstUnmapped(t.mr().lkey(), iova, 1, true)).as("writable after %s at page %d",
                        advice, page(va)).isNegative();
                }
                else if (advice == MrAdvice.PREFETCH || rig.processB().translate(va) >= 0)
                {
                    assertThat(tables().firstUnmapped(t.mr().lkey(), iova, 1, false)).as("mapped after %s at page %d",
                        advice, page(va)).isNegative();
                }
            }
        }

        /** The invariant: device translations follow the page table; memory holds the model's bytes. */
        void check()
        {
            final UserProcess b = rig.processB();
            for (final Target t : targets)
            {
                for (long va = t.firstVa(); va < t.endVa(); va += PAGE)
                {
                    final long iova = t.iovaOf(va);
                    final boolean mapped = tables().firstUnmapped(t.mr().lkey(), iova, 1, false) < 0;
                    assertThat(t.mr().deviceMapped(va)).as("%s deviceMapped(page %d) agrees with the tables", t.name(),
                        page(va)).isEqualTo(mapped);
                    if (!mapped)
                    {
                        assertThat(t.mr().devicePhysAddr(va)).isEqualTo(-1);
                        continue;
                    }
                    final long phys = b.translate(va);
                    assertThat(phys).as("%s maps page %d, which the process does not map", t.name(), page(va))
                        .isNotEqualTo(-1);
                    assertThat(tables().mappedDmaAddress(t.mr().lkey(), iova)).as("%s frame of page %d", t.name(),
                        page(va)).isEqualTo(phys);
                    assertThat(t.mr().devicePhysAddr(va)).isEqualTo(phys);
                    if (tables().firstUnmapped(t.mr().lkey(), iova, 1, true) < 0)
                    {
                        final boolean[] cpuWritable = new boolean[1];
                        b.hmmRangeFault(va, PAGE, false, false, (v, p, w) -> cpuWritable[0] = w);
                        assertThat(t.writable()).as("%s writable entry in a read-only MR", t.name()).isTrue();
                        assertThat(cpuWritable[0]).as("%s writable entry for page %d, which the CPU maps read-only",
                            t.name(), page(va)).isTrue();
                    }
                }
            }
            parent.check("parent");
            for (int i = 0; i < children.size(); i++)
            {
                children.get(i).check("child " + i);
            }
        }
    }

    // ------------------------------------------------------------------ actions

    private static Arbitrary<Double> starts()
    {
        return Arbitraries.integers().between(0, 999).map(permille -> permille / 1000.0);
    }

    private static Arbitrary<Integer> lengths()
    {
        return Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.integers().between(1, MAX_ACCESS)),
            Tuple.of(1, Arbitraries.of((int)PAGE, 2 * (int)PAGE)));
    }

    private static Arbitrary<Integer> firstPages()
    {
        return Arbitraries.integers().between(0, PAGES - 1);
    }

    private static Arbitrary<Integer> pageCounts()
    {
        return Arbitraries.integers().between(1, 4);
    }

    /** An action whose choices do not depend on the state: one arbitrary of transformers, built once. */
    private abstract static class Fixed implements Action.Independent<World>
    {
        private final Arbitrary<Transformer<World>> transformers;

        Fixed(final Arbitrary<Transformer<World>> transformers)
        {
            this.transformers = transformers;
        }

        @Override
        public Arbitrary<Transformer<World>> transformer()
        {
            return transformers;
        }
    }

    private static Arbitrary<Integer> targets()
    {
        return Arbitraries.integers().between(0, 1);
    }

    static final class RemoteWrite extends Fixed
    {
        RemoteWrite()
        {
            super(Combinators.combine(targets(), starts(), lengths()).as((t, s, l) -> Transformer.mutate(
                "remote WRITE mr " + t + " at " + s + " len " + l, w -> w.remoteWrite(t, s, l))));
        }
    }

    static final class RemoteRead extends Fixed
    {
        RemoteRead()
        {
            super(Combinators.combine(targets(), starts(), lengths()).as((t, s, l) -> Transformer.mutate(
                "remote READ mr " + t + " at " + s + " len " + l, w -> w.remoteRead(t, s, l))));
        }
    }

    static final class CpuWrite extends Fixed
    {
        CpuWrite()
        {
            super(Combinators.combine(starts(), lengths()).as((s, l) -> Transformer.mutate(
                "CPU write at " + s + " len " + l, w -> w.cpuWrite(s, l))));
        }
    }

    static final class Munmap extends Fixed
    {
        Munmap()
        {
            super(Combinators.combine(firstPages(), pageCounts()).as((f, n) -> Transformer.mutate(
                "munmap page " + f + " x" + n, w -> w.munmap(f, n))));
        }
    }

    static final class Mmap extends Fixed
    {
        Mmap()
        {
            super(Combinators.combine(firstPages(), pageCounts()).as((f, n) -> Transformer.mutate(
                "mmap MAP_FIXED page " + f + " x" + n, w -> w.mmap(f, n))));
        }
    }

    static final class DontNeed extends Fixed
    {
        DontNeed()
        {
            super(Combinators.combine(firstPages(), pageCounts()).as((f, n) -> Transformer.mutate(
                "MADV_DONTNEED page " + f + " x" + n, w -> w.dontNeed(f, n))));
        }
    }

    static final class Mprotect extends Fixed
    {
        Mprotect()
        {
            super(Combinators.combine(firstPages(), pageCounts(), Arbitraries.of(true, false)).as((f, n, rw) ->
                Transformer.mutate("mprotect page " + f + " x" + n + (rw ? " RW" : " R"), w -> w.mprotect(f, n, rw))));
        }
    }

    static final class Fork extends Fixed
    {
        Fork()
        {
            super(Arbitraries.just(Transformer.mutate("fork", World::fork)));
        }
    }

    static final class ChildWrite extends Fixed
    {
        ChildWrite()
        {
            super(Combinators.combine(Arbitraries.integers().between(0, MAX_CHILDREN - 1), starts(), lengths())
                .as((c, s, l) -> Transformer.mutate("child " + c + " writes at " + s + " len " + l,
                    w -> w.childWrite(c, s, l))));
        }
    }

    static final class Reclaim extends Fixed
    {
        Reclaim()
        {
            super(Arbitraries.integers().between(1, 64).map(n -> Transformer.mutate("reclaim " + n,
                w -> w.reclaim(n))));
        }
    }

    static final class Compact extends Fixed
    {
        Compact()
        {
            super(Arbitraries.just(Transformer.mutate("compact", World::compact)));
        }
    }

    static final class Reregister extends Fixed
    {
        Reregister()
        {
            super(targets().map(t -> Transformer.mutate("deregister and register mr " + t + " again",
                w -> w.reregister(t))));
        }
    }

    static final class Advise extends Fixed
    {
        Advise()
        {
            super(Combinators.combine(Arbitraries.of(MrAdvice.class), Arbitraries.of(true, false), targets(),
                starts(), lengths()).as((a, f, t, s, l) -> Transformer.mutate("advise " + a + (f ? " FLUSH" : "")
                    + " mr " + t + " at " + s + " len " + l, w -> w.advise(a, f, t, s, l))));
        }
    }
}
