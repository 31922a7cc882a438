package dev.rnicsim.keys;

import static dev.rnicsim.testkit.Unmemoized.fresh;
import static dev.rnicsim.testkit.Unmemoized.fresh2;
import static dev.rnicsim.testkit.Unmemoized.fresh3;

import dev.rnicsim.keys.KeyOps.KeyOp;
import dev.rnicsim.keys.KeyWorld.Buf;
import dev.rnicsim.keys.KeyWorld.KeyName;
import dev.rnicsim.keys.KeyWorld.MrM;
import dev.rnicsim.keys.KeyWorld.MwM;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.pagetable.Madvice;
import dev.rnicsim.testkit.Unmemoized;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwType;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.ActionChainArbitrary;
import net.jqwik.api.state.Transformer;

/**
 * The generators of the key-lifecycle chains: up to {@code maxActions} actions, each chosen from a snapshot of the
 * reference world's state (buffers, MRs, windows, PDs, keys) so that most do something and some probe the edges
 * (stale keys, ranges one byte too long, unmapped memory, rights missing, full tables).
 *
 * <p>Every generator works on an immutable {@link Snapshot} taken when the action is drawn, never on the live worlds:
 * jqwik evaluates flat-mapped values again when it replays a chain while shrinking, and a lambda that read the
 * worlds then would see another state (and would keep every world of every chain alive).
 */
final class KeyChains
{
    static final long PAGE = KeyWorld.PAGE;

    private KeyChains()
    {
    }

    static Arbitrary<ChainParams> params()
    {
        return Combinators.combine(Arbitraries.of(ForkBehaviour.MODERN, ForkBehaviour.LEGACY),
            Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.just(64L << 10)), Tuple.of(2, Arbitraries.just(128L << 10)),
                Tuple.of(1, Arbitraries.just(8L << 20))),
            Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.just(6)), Tuple.of(3, Arbitraries.just(8)),
                Tuple.of(2, Arbitraries.just(12)), Tuple.of(1, Arbitraries.just(64))),
            Arbitraries.of(false, true))
            .as(ChainParams::new);
    }

    /**
     * The parameters of the chain about to run in this thread: set by the property from its own {@code @ForAll}
     * parameter before it runs the chain. (A chain generated inside {@code params().flatMap(...)} would not shrink:
     * jqwik regenerates the inner value of a flatMap from its seed, losing the chain's recorded run.)
     */
    static final ThreadLocal<ChainParams> PARAMS = new ThreadLocal<>();

    /**
     * @param maxActions most actions in a chain.
     * @param stats      where the worlds report stale-key accesses.
     */
    static ActionChainArbitrary<Lockstep> chains(final int maxActions, final ReuseStats stats)
    {
        return ActionChain.<Lockstep>startWith(() -> new Lockstep(java.util.Objects.requireNonNull(PARAMS.get(),
            "KeyChains.PARAMS: set the chain's parameters before running it"), stats))
            .withAction(16, new RemoteAction())
            .withAction(6, new RegAction())
            .withAction(3, new DeregAction())
            .withAction(3, new ReregAction())
            .withAction(2, new MmapAction())
            .withAction(3, new CpuWriteAction())
            .withAction(2, new CpuReadAction())
            .withAction(2, new AllocMwAction())
            .withAction(4, new BindAction())
            .withAction(1, new UnbindAction())
            .withAction(2, new LocalInvAction())
            .withAction(1, new DeallocAction())
            .withAction(2, new MunmapAction())
            .withAction(2, new MadviseAction())
            .withAction(1, new ForkAction())
            .withAction(1, new ReclaimAction())
            .withAction(1, new CompactAction())
            .withAction(1, new AllocPdAction())
            .withAction(1, new ClosePdAction())
            .withAction(1, new CloseContextAction())
            .withMaxTransformations(maxActions);
    }

    // ------------------------------------------------------------------ the snapshot

    /** An MR as the generators see it. */
    record MrS(String name, int pd, long addr, long len, Set<Access> access, boolean live)
    {
    }

    /** A window as the generators see it. */
    record MwS(String name, int pd, MwType type, boolean live, boolean bound, long lo, long len, Set<Access> rights)
    {
    }

    /**
     * A key name as the generators see it: where accesses with it aim ({@code lo}, {@code len}), the PD of its live
     * holder (-1: none), the rights its holder grants, and whether it is the newest name of its value.
     */
    record KeyS(int label, int pd, long lo, long len, Set<Access> grants, boolean newest, boolean staleReused)
    {
    }

    /** The reference world's state when an action is drawn; immutable. */
    record Snapshot(List<Buf> bufs, List<Integer> livePds, List<Integer> allPds, List<MrS> mrs, List<MwS> mws,
                    List<KeyS> keys, List<Tuple.Tuple2<Integer, Integer>> type2Keys, String ctx, int nextBuf,
                    int nextMr, int nextMw, int nextPd, int nextKey, int nextChild, int nextCtx)
    {
        static Snapshot of(final Lockstep s)
        {
            final KeyWorld r = s.ref();
            final List<Integer> livePds = r.pds.values().stream().filter(p -> p.live).map(p -> p.index).toList();
            final List<Integer> allPds = r.pds.values().stream().map(p -> p.index).toList();
            final List<MrS> mrs = r.mrs.values().stream().map(m -> new MrS(m.name, m.pd.index, m.addr,
                m.lengthBytes, Set.copyOf(m.access), m.live)).toList();
            final List<MwS> mws = r.mws.values().stream().map(w -> new MwS(w.name, w.pd.index, w.type, w.live,
                w.bound, w.lo, w.len, Set.copyOf(w.rights))).toList();
            final List<KeyS> keys = new ArrayList<>();
            final List<Tuple.Tuple2<Integer, Integer>> type2 = new ArrayList<>();
            final Buf first = r.bufs.isEmpty() ? null : r.bufs.values().iterator().next();
            for (final KeyName k : r.keys.values())
            {
                final Object h = r.holderOf(k.value);
                final boolean newest = newestLabel(r, k.value) == k.label;
                long lo = k.lo;
                long len = k.len;
                int pd = -1;
                Set<Access> grants = Set.of();
                if (h instanceof MrM m)
                {
                    lo = m.addr;
                    len = m.lengthBytes;
                    pd = m.pd.index;
                    grants = Set.copyOf(m.access);
                }
                else if (h instanceof MwM w)
                {
                    pd = w.pd.index;
                    if (w.bound)
                    {
                        lo = w.lo;
                        len = w.len;
                        grants = Set.copyOf(w.rights);
                    }
                    if (w.type == MwType.TYPE_2 && newest)
                    {
                        type2.add(Tuple.of(w.pd.index, k.label));
                    }
                }
                if (len <= 0 && first != null)
                {
                    lo = first.addr();
                    len = first.lengthBytes();
                }
                final boolean staleReused = k.mrKey && k.value != 0 && k.allocationsAtDeath >= 0
                    && r.mpt.allocations(MptModel.index(k.value)) > k.allocationsAtDeath;
                keys.add(new KeyS(k.label, pd, lo, len, grants, newest, staleReused));
            }
            final KeyOps.Names n = s.names;
            return new Snapshot(List.copyOf(r.bufs.values()), livePds, allPds, mrs, mws, List.copyOf(keys),
                List.copyOf(type2), r.ctxName, n.buf, n.mr, n.mw, n.pd, n.key, n.child, n.ctx);
        }

        List<MrS> liveMrs()
        {
            return mrs.stream().filter(MrS::live).toList();
        }

        List<MwS> liveWindows(final MwType type)
        {
            return mws.stream().filter(w -> w.live() && (type == null || w.type() == type)).toList();
        }

        /** A buffer-relative expression for an address: the newest buffer whose range holds it, else the nearest. */
        Tuple.Tuple2<String, Long> relative(final long addr)
        {
            Buf best = null;
            long bestDistance = Long.MAX_VALUE;
            for (final Buf b : bufs)
            {
                if (addr >= b.addr() && addr < b.addr() + b.lengthBytes())
                {
                    best = b;
                    bestDistance = 0;
                }
                else if (bestDistance > 0)
                {
                    final long d = Math.min(Math.abs(addr - b.addr()), Math.abs(addr - b.addr() - b.lengthBytes()));
                    if (d < bestDistance)
                    {
                        best = b;
                        bestDistance = d;
                    }
                }
            }
            return Tuple.of(best.name(), addr - best.addr());
        }
    }

    private static int newestLabel(final KeyWorld r, final int value)
    {
        int found = -1;
        for (final KeyName k : r.keys.values())
        {
            if (k.value == value)
            {
                found = k.label;
            }
        }
        return found;
    }

    private static Transformer<Lockstep> t(final KeyOp op)
    {
        return new OpTransformer(op);
    }

    /** A transformer that keeps its action, so that a failing chain's actions can be minimized ({@link Minimize}). */
    record OpTransformer(KeyOp op) implements Transformer<Lockstep>
    {
        @Override
        public Lockstep apply(final Lockstep s)
        {
            s.apply(op);
            return s;
        }

        @Override
        public String transformation()
        {
            return op.toString();
        }
    }

    /**
     * An action drawn from a snapshot of the reference world. It has no jqwik precondition: when shrinking, jqwik
     * replays the actions it keeps as they were generated and discards a shortened chain whose preconditions no longer
     * hold, which would leave almost nothing to shrink. Instead an action that cannot be drawn now is a noop (jqwik
     * draws another), and one whose names a shortened chain never created is a skipped step in every world.
     */
    private interface Step extends Action.Dependent<Lockstep>
    {
        boolean can(Snapshot s);

        Arbitrary<KeyOp> op(Snapshot s);

        @Override
        default Arbitrary<Transformer<Lockstep>> transformer(final Lockstep state)
        {
            final Snapshot s = state.snapshot();
            if (!can(s))
            {
                return Arbitraries.just(Transformer.noop());
            }
            return Unmemoized.of(op(s).map(KeyChains::t));
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * One of {@code values}, a list taken from a snapshot: its generator is built afresh ({@link Unmemoized}), not
     * looked up in jqwik's generator cache by hashing and comparing the list (a list of a snapshot is never drawn
     * from twice).
     */
    private static <T> Arbitrary<T> of(final List<T> values)
    {
        return Unmemoized.of(Arbitraries.of(values));
    }

    /** Mostly one of {@code preferred}, else one of {@code all}. */
    private static <T> Arbitrary<T> mostly(final List<T> preferred, final List<T> all, final int preferredWeight)
    {
        if (preferred.isEmpty())
        {
            return of(all);
        }
        if (all.isEmpty())
        {
            return of(preferred);
        }
        return Arbitraries.frequencyOf(Tuple.of(preferredWeight, of(preferred)),
            Tuple.of(1, of(all)));
    }

    /** An offset in a buffer of {@code len} bytes, often near a page boundary. */
    private static Arbitrary<Long> offset(final long len)
    {
        final long pages = len / PAGE;
        return Arbitraries.frequencyOf(
            Tuple.of(2, Arbitraries.longs().between(0, len - 1)),
            Tuple.of(1, Arbitraries.longs().between(0, pages - 1).map(p -> p * PAGE)),
            Tuple.of(2, Arbitraries.longs().between(1, pages).flatMap(fresh(p -> Arbitraries.longs().between(1, 40)
                .map(d -> Math.max(0, p * PAGE - d))))));
    }

    private static Arbitrary<String> text(final int len)
    {
        return Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            .ofLength(len);
    }

    private static final List<Set<Access>> REG_ACCESS = List.of(
        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ),
        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC),
        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.MW_BIND),
        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.MW_BIND),
        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ),
        EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE),
        EnumSet.of(Access.LOCAL_WRITE, Access.MW_BIND),
        EnumSet.of(Access.REMOTE_READ),
        EnumSet.of(Access.REMOTE_READ, Access.MW_BIND),
        EnumSet.of(Access.LOCAL_WRITE),
        EnumSet.noneOf(Access.class),
        EnumSet.of(Access.REMOTE_WRITE),
        EnumSet.of(Access.REMOTE_ATOMIC, Access.REMOTE_READ));

    /** Mostly valid, remote access sets; the last two break ib_check_mr_access (EINVAL). */
    private static Arbitrary<Set<Access>> regAccess()
    {
        return Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.of(REG_ACCESS.subList(0, 2))),
            Tuple.of(8, Arbitraries.of(REG_ACCESS.subList(2, 4))),
            Tuple.of(6, Arbitraries.of(REG_ACCESS.subList(4, 9))),
            Tuple.of(2, Arbitraries.of(REG_ACCESS.subList(9, 11))),
            Tuple.of(1, Arbitraries.of(REG_ACCESS.subList(11, 13))));
    }

    private static Arbitrary<Set<Access>> windowRights()
    {
        return Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.of(List.<Set<Access>>of(EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE),
                EnumSet.of(Access.REMOTE_READ), EnumSet.of(Access.REMOTE_WRITE),
                EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC)))),
            Tuple.of(1, Arbitraries.just(EnumSet.noneOf(Access.class))));
    }

    /** A range [off, off+len) of a buffer of {@code size} bytes: page-aligned or not, within it. */
    private static Arbitrary<long[]> range(final long size)
    {
        final Arbitrary<long[]> aligned = Arbitraries.longs().between(0, size / PAGE - 1).flatMap(fresh(p -> Arbitraries
            .longs().between(1, size / PAGE - p).map(n -> new long[] {p * PAGE, n * PAGE})));
        final Arbitrary<long[]> any = offset(size).flatMap(fresh(off -> Arbitraries.longs().between(1, size - off)
            .map(len -> new long[] {off, len})));
        return Arbitraries.frequencyOf(Tuple.of(1, aligned), Tuple.of(1, any));
    }

    // ------------------------------------------------------------------ memory actions

    static final class MmapAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.bufs().size() < 8;
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final String name = "buf" + s.nextBuf();
            return Arbitraries.of(8L << 10, 16L << 10, 32L << 10).map(size -> new KeyOps.Mmap(name, size));
        }
    }

    static final class CpuWriteAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return of(s.bufs()).flatMap(fresh(b -> offset(b.lengthBytes()).flatMap(fresh(
                off -> Arbitraries.integers().between(1, (int)Math.min(32, b.lengthBytes() - off)).flatMap(fresh(
                    n -> text(n).map(t -> new KeyOps.CpuWrite(b.name(), off, t))))))));
        }
    }

    static final class CpuReadAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return of(s.bufs()).flatMap(fresh(b -> offset(b.lengthBytes()).flatMap(fresh(
                off -> Arbitraries.integers().between(1, (int)Math.min(48, b.lengthBytes() - off)).map(
                    n -> new KeyOps.CpuRead(b.name(), off, n))))));
        }
    }

    static final class MunmapAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return of(s.bufs()).flatMap(fresh(b -> Arbitraries.longs().between(0,
                b.lengthBytes() / PAGE - 1).flatMap(fresh(p -> Arbitraries.longs().between(1,
                b.lengthBytes() / PAGE - p).map(
                    n -> new KeyOps.Munmap(b.name(), p * PAGE, n * PAGE))))));
        }
    }

    static final class MadviseAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final Arbitrary<Madvice> advice = Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(Madvice.DONTNEED)),
                Tuple.of(2, Arbitraries.just(Madvice.DONTFORK)), Tuple.of(1, Arbitraries.just(Madvice.DOFORK)),
                Tuple.of(1, Arbitraries.just(Madvice.HUGEPAGE)), Tuple.of(1, Arbitraries.just(Madvice.NOHUGEPAGE)));
            return of(s.bufs()).flatMap(fresh(b -> Arbitraries.longs().between(0,
                b.lengthBytes() / PAGE - 1).flatMap(fresh(p -> Arbitraries.longs().between(1,
                b.lengthBytes() / PAGE - p).flatMap(fresh(
                    n -> advice.map(a -> new KeyOps.Madvise(b.name(), p * PAGE, n * PAGE, a))))))));
        }
    }

    static final class ForkAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.nextChild() < 3 && !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return Arbitraries.just(new KeyOps.Fork("child" + s.nextChild()));
        }
    }

    static final class ReclaimAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return Arbitraries.of(16L, 256L, 100000L).map(KeyOps.Reclaim::new);
        }
    }

    static final class CompactAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return Arbitraries.just(new KeyOps.Compact());
        }
    }

    // ------------------------------------------------------------------ PDs and contexts

    static final class AllocPdAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.livePds().size() < 3;
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return Arbitraries.just(new KeyOps.AllocPd(s.nextPd(), s.ctx()));
        }
    }

    static final class ClosePdAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.livePds().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return of(s.livePds()).map(KeyOps.ClosePd::new);
        }
    }

    static final class CloseContextAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return s.nextCtx() < 3;
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return Arbitraries.just(new KeyOps.CloseContext(s.ctx(), s.nextCtx()));
        }
    }

    // ------------------------------------------------------------------ registration

    static final class RegAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.bufs().isEmpty() && !s.livePds().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final String mr = "mr" + s.nextMr();
            final int keyN = s.nextKey();
            return Combinators.combine(of(s.livePds()), of(s.bufs()), regAccess())
                .flatAs(fresh3((pd, b, access) -> range(b.lengthBytes()).map(rg -> new KeyOps.Reg(mr, pd, b.name(),
                    rg[0], rg[1], access, keyN))));
        }
    }

    static final class DeregAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.liveMrs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return mostly(s.liveMrs(), s.mrs(), 6).map(m -> new KeyOps.Dereg(m.name()));
        }
    }

    static final class ReregAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.liveMrs().isEmpty() && !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final int keyN = s.nextKey();
            return mostly(s.liveMrs(), s.mrs(), 8).flatMap(fresh(m -> Arbitraries.integers().between(0, 19).flatMap(
                fresh(kind ->
            {
                if (kind < 8)
                {
                    return regAccess().map(a -> (KeyOp)new KeyOps.Rereg(m.name(), null, null, 0, 0, a, keyN));
                }
                if (kind < 14 || kind == 18)
                {
                    final boolean withAccess = kind == 18;
                    return Combinators.combine(of(s.bufs()), regAccess()).flatAs(fresh2((b, a) -> range(
                        b.lengthBytes()).map(rg -> (KeyOp)new KeyOps.Rereg(m.name(), null, b.name(), rg[0], rg[1],
                        withAccess ? a : null, keyN))));
                }
                if (kind < 18)
                {
                    return mostly(s.livePds(), s.allPds(), 5).map(p -> (KeyOp)new KeyOps.Rereg(m.name(), p, null, 0,
                        0, null, keyN));
                }
                return Arbitraries.just((KeyOp)new KeyOps.Rereg(m.name(), null, null, 0, 0, null, keyN));
            }))));
        }
    }

    // ------------------------------------------------------------------ windows

    static final class AllocMwAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.livePds().isEmpty() && s.liveWindows(null).size() < 4;
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final String mw = "win" + s.nextMw();
            final int keyN = s.nextKey();
            return Combinators.combine(of(s.livePds()), Arbitraries.of(MwType.TYPE_1, MwType.TYPE_2))
                .as((pd, type) -> new KeyOps.AllocMw(mw, pd, type, keyN));
        }
    }

    static final class BindAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.liveWindows(null).isEmpty() && !s.mrs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final int keyN = s.nextKey();
            final List<MwS> windows = s.liveWindows(null);
            final List<MwS> bindable = windows.stream().filter(w -> s.liveMrs().stream().anyMatch(m -> m.pd() == w.pd()
                && m.access().contains(Access.MW_BIND))).toList();
            return mostly(bindable, windows, 5).flatMap(fresh(w ->
            {
                final List<MrS> good = s.liveMrs().stream().filter(m -> m.pd() == w.pd()
                    && m.access().contains(Access.MW_BIND)).toList();
                return mostly(good, s.mrs(), 8).flatMap(fresh(m ->
                {
                    final long len = m.len();
                    final Arbitrary<long[]> inside = Arbitraries.longs().between(0, len - 1).flatMap(fresh(
                        off -> Arbitraries.longs().between(1, len - off).map(l -> new long[] {off, l})));
                    final Arbitrary<long[]> edge = Arbitraries.longs().between(1, 64).flatMap(fresh(d -> Arbitraries.of(
                        new long[] {-d, len}, new long[] {0, len + d}, new long[] {len - 1, 1 + d})));
                    return Combinators.combine(Arbitraries.frequencyOf(Tuple.of(6, inside), Tuple.of(1, edge)),
                        windowRights()).as((rg, rights) -> (KeyOp)new KeyOps.Bind(w.name(), w.pd(), m.name(), rg[0],
                        rg[1], rights, keyN));
                }));
            }));
        }
    }

    static final class UnbindAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.liveWindows(MwType.TYPE_1).isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final int keyN = s.nextKey();
            return of(s.liveWindows(MwType.TYPE_1)).map(w -> new KeyOps.Unbind(w.name(), w.pd(), keyN));
        }
    }

    static final class LocalInvAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.keys().isEmpty() && !s.livePds().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final List<Integer> labels = s.keys().stream().map(KeyS::label).toList();
            final Arbitrary<Tuple.Tuple2<Integer, Integer>> any = Combinators.combine(of(s.livePds()),
                of(labels)).as(Tuple::of);
            final List<Tuple.Tuple2<Integer, Integer>> current = s.type2Keys().stream().filter(t -> s.livePds()
                .contains(t.get1())).toList();
            final Arbitrary<Tuple.Tuple2<Integer, Integer>> choice = current.isEmpty() ? any
                : Arbitraries.frequencyOf(Tuple.of(3, of(current)), Tuple.of(1, any));
            return choice.map(t -> new KeyOps.LocalInv(t.get1(), t.get2()));
        }
    }

    static final class DeallocAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.mws().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            return mostly(s.liveWindows(null), s.mws(), 8).map(w -> new KeyOps.Dealloc(w.name()));
        }
    }

    // ------------------------------------------------------------------ remote access

    static final class RemoteAction implements Step
    {
        @Override
        public boolean can(final Snapshot s)
        {
            return !s.keys().isEmpty() && !s.livePds().isEmpty() && !s.bufs().isEmpty();
        }

        @Override
        public Arbitrary<KeyOp> op(final Snapshot s)
        {
            final Arbitrary<KeyOps.Op> ops = Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(KeyOps.Op.READ)),
                Tuple.of(4, Arbitraries.just(KeyOps.Op.WRITE)), Tuple.of(1, Arbitraries.just(KeyOps.Op.FAA)),
                Tuple.of(1, Arbitraries.just(KeyOps.Op.CAS)));
            return ops.flatMap(fresh(op ->
            {
                // Mostly a key that grants the operation now, else any key that names something, else any key.
                final Access right = op == KeyOps.Op.READ ? Access.REMOTE_READ : op == KeyOps.Op.WRITE
                    ? Access.REMOTE_WRITE : Access.REMOTE_ATOMIC;
                final List<KeyS> granting = s.keys().stream().filter(k -> k.newest() && k.grants().contains(right))
                    .toList();
                final List<KeyS> naming = s.keys().stream().filter(k -> k.newest() && k.pd() >= 0).toList();
                final List<KeyS> staleReused = s.keys().stream().filter(KeyS::staleReused).toList();
                final List<Tuple.Tuple2<Integer, Arbitrary<KeyS>>> choices = new ArrayList<>();
                choices.add(Tuple.of(2, of(s.keys())));
                if (!staleReused.isEmpty())
                {
                    // A key whose MR is gone and whose MPT index was taken again since: valid again or not?
                    choices.add(Tuple.of(4, of(staleReused)));
                }
                if (!naming.isEmpty())
                {
                    choices.add(Tuple.of(1, of(naming)));
                }
                if (!granting.isEmpty())
                {
                    choices.add(Tuple.of(14, of(granting)));
                }
                return Arbitraries.frequencyOf(choices).flatMap(fresh(k -> access(s, k, op)));
            }));
        }

        private static Arbitrary<KeyOp> access(final Snapshot s, final KeyS k, final KeyOps.Op op)
        {
            final Arbitrary<Integer> pd = k.pd() >= 0 && s.livePds().contains(k.pd())
                ? Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(k.pd())), Tuple.of(1, of(s.livePds())))
                : of(s.livePds());
            final long lo = k.lo();
            final long len = k.len();
            final boolean atomic = op == KeyOps.Op.FAA || op == KeyOps.Op.CAS;
            final Arbitrary<Integer> sizes = atomic ? Arbitraries.just(8) : Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(1, 64)), Tuple.of(1, Arbitraries.integers().between(1, 8)));
            return Combinators.combine(pd, sizes).flatAs(fresh2((p, size) ->
            {
                final long maxStart = lo + Math.max(0, len - size);
                final Arbitrary<Long> inside = atomic
                    ? Arbitraries.longs().between(0, Math.max(0, (len - 8) / 8)).map(i -> ((lo + 7) & -8L) + i * 8)
                    : Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.longs().between(lo, maxStart)),
                        Tuple.of(2, Arbitraries.longs().between(1, 63).map(d -> Math.max(lo,
                            Math.min(maxStart, ((lo + len / 2) & -PAGE) - d)))));
                final Arbitrary<Long> edges = Arbitraries.of(lo - 1, lo + len - size + 1, lo + len - 1, lo);
                final Arbitrary<Long> misaligned = Arbitraries.longs().between(lo, maxStart).map(a -> a | 1);
                final Arbitrary<Long> addr = atomic
                    ? Arbitraries.frequencyOf(Tuple.of(8, inside), Tuple.of(1, edges.map(a -> a & -8L)),
                        Tuple.of(1, misaligned))
                    : Arbitraries.frequencyOf(Tuple.of(6, inside), Tuple.of(1, edges));
                return addr.flatMap(fresh(a ->
                {
                    final Tuple.Tuple2<String, Long> rel = s.relative(a);
                    return switch (op)
                    {
                        case WRITE -> text(size).map(t -> (KeyOp)new KeyOps.Remote(op, p, k.label(), rel.get1(),
                            rel.get2(), size, t, 0, 0));
                        case READ -> Arbitraries.just((KeyOp)new KeyOps.Remote(op, p, k.label(), rel.get1(),
                            rel.get2(), size, null, 0, 0));
                        case FAA -> Arbitraries.longs().between(1, 1000).map(add -> (KeyOp)new KeyOps.Remote(op, p,
                            k.label(), rel.get1(), rel.get2(), size, null, add, 0));
                        // Compare 0 matches memory nothing wrote yet, so both outcomes of a CAS come up.
                        case CAS -> Combinators.combine(Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.just(0L)),
                            Tuple.of(1, Arbitraries.longs().between(1, 1000))), Arbitraries.longs().between(0,
                            1L << 40)).as((c, sw) -> (KeyOp)new KeyOps.Remote(op, p, k.label(), rel.get1(),
                            rel.get2(), size, null, c, sw));
                    };
                }));
            }));
        }
    }
}
