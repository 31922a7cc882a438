package dev.rnicsim.keys;

import static dev.rnicsim.keys.HostSteps.*;
import static dev.rnicsim.keys.KeySteps.*;

import dev.rnicsim.keys.KeyOps.KeyOp;
import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.keys.WorldModel.KeyName;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.pagetable.ForkBehaviour;
import dev.rnicsim.testkit.Unmemoized;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwType;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCases;
import net.jqwik.api.ExhaustiveGenerator;
import net.jqwik.api.RandomGenerator;
import net.jqwik.api.Tuple;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.ActionChainArbitrary;
import net.jqwik.api.state.Transformer;

/**
 * The generators of the key-lifecycle chains: up to {@code maxActions} actions, each chosen from a snapshot of the
 * reference world's state (buffers, MRs, windows, PDs, keys) so that most do something and some probe the edges
 * (stale keys, ranges one byte too long, unmapped memory, rights missing, full tables). Each step is one number
 * drawn by jqwik and decoded against the snapshot ({@link Draw}): which kind of action, then its values.
 *
 * <p>Every step is decoded from an immutable {@link Snapshot} taken when the action is drawn, never from the live
 * worlds: jqwik decodes a step's number again when it replays a chain while shrinking, and a decoder that read the
 * worlds then would see another state (and would keep every world of every chain alive).
 */
final class KeyChains
{
    static final long PAGE = KeyWorld.PAGE;

    private KeyChains()
    {
    }

    /**
     * The chain's parameters. The values of {@code frequencyOf} are drawn as a flat map into the arbitrary chosen,
     * whose generator jqwik looked up in its per-property cache at every try (hashing the arbitrary): they are
     * {@link Unmemoized}, the same values for a seed.
     */
    static Arbitrary<ChainParams> params()
    {
        return Combinators.combine(Arbitraries.of(ForkBehaviour.MODERN, ForkBehaviour.LEGACY),
            Arbitraries.frequencyOf(Tuple.of(2, just(64L << 10)), Tuple.of(2, just(128L << 10)),
                Tuple.of(1, just(8L << 20))),
            Arbitraries.frequencyOf(Tuple.of(2, just(6)), Tuple.of(3, just(8)), Tuple.of(2, just(12)),
                Tuple.of(1, just(64))),
            Arbitraries.of(false, true))
            .as(ChainParams::new);
    }

    private static <T> Arbitrary<T> just(final T value)
    {
        return Unmemoized.of(Arbitraries.just(value));
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
            .withAction(new NextAction())
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

    /** The reference world's state when an action is drawn; immutable (its lists are its own, never changed). */
    record Snapshot(List<Buf> bufs, List<Integer> livePds, List<Integer> allPds, List<MrS> mrs, List<MwS> mws,
                    List<KeyS> keys, List<Tuple.Tuple2<Integer, Integer>> type2Keys, String ctx, int nextBuf,
                    int nextMr, int nextMw, int nextPd, int nextKey, int nextChild, int nextCtx, List<MrS> liveMrs,
                    List<MwS> liveWindows, List<MwS> liveType1Windows)
    {
        static Snapshot of(final Lockstep s)
        {
            // Plain loops: taken once per action applied, and streams cost several times more.
            final KeyWorld r = s.ref();
            final List<Integer> livePds = new ArrayList<>(r.pds.size());
            final List<Integer> allPds = new ArrayList<>(r.pds.size());
            for (final WorldModel.PdM p : r.pds.values())
            {
                allPds.add(p.index);
                if (p.live)
                {
                    livePds.add(p.index);
                }
            }
            final List<MrS> mrs = new ArrayList<>(r.mrs.size());
            final List<MrS> liveMrs = new ArrayList<>(r.mrs.size());
            for (final MrM m : r.mrs.values())
            {
                final MrS ms = new MrS(m.name, m.pd.index, m.addr, m.lengthBytes, Set.copyOf(m.access), m.live);
                mrs.add(ms);
                if (m.live)
                {
                    liveMrs.add(ms);
                }
            }
            final List<MwS> mws = new ArrayList<>(r.mws.size());
            final List<MwS> liveWindows = new ArrayList<>(r.mws.size());
            final List<MwS> liveType1 = new ArrayList<>(r.mws.size());
            for (final MwM w : r.mws.values())
            {
                final MwS ws = new MwS(w.name, w.pd.index, w.type, w.live, w.bound, w.lo, w.len, Set.copyOf(w.rights));
                mws.add(ws);
                if (w.live)
                {
                    liveWindows.add(ws);
                    if (w.type == MwType.TYPE_1)
                    {
                        liveType1.add(ws);
                    }
                }
            }
            final List<KeyS> keys = new ArrayList<>(r.keys.size());
            final List<Tuple.Tuple2<Integer, Integer>> type2 = new ArrayList<>();
            final Buf first = r.bufs.isEmpty() ? null : r.bufs.values().iterator().next();
            final Holders holders = r.liveHolders();
            // The newest name of each key value is the last label issued with it (labels grow in the map's order).
            final KeyName[] names = r.keys.values().toArray(new KeyName[0]);
            for (int i = 0; i < names.length; i++)
            {
                final KeyName k = names[i];
                final Object h = holders.of(k.value);
                boolean newest = true;
                for (int j = i + 1; j < names.length && newest; j++)
                {
                    newest = names[j].value != k.value;
                }
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
            // The lists are the snapshot's own, never changed once it is made: no read-only views around them.
            return new Snapshot(new ArrayList<>(r.bufs.values()), livePds, allPds, mrs, mws, keys, type2, r.ctxName,
                n.buf, n.mr, n.mw, n.pd, n.key, n.child, n.ctx, liveMrs, liveWindows, liveType1);
        }

        /** The live windows, of one type or (null) of any. */
        List<MwS> liveWindows(final MwType type)
        {
            return type == null ? liveWindows : type == MwType.TYPE_1 ? liveType1Windows
                : liveWindows.stream().filter(w -> w.type() == type).toList();
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
     * The one action of a chain's step: which kind of action, and all its values, decoded from one number jqwik draws
     * ({@link Draw}), against a snapshot of the reference world. The kinds are weighted as before, among those that
     * can run now (jqwik's choice among weighted actions, with another draw when the one chosen cannot run, gave each
     * the same share). It has no jqwik precondition: when shrinking, jqwik replays the steps it keeps as they were drawn
     * and discards a shortened chain whose preconditions no longer hold, which would leave almost nothing to shrink; a
     * step whose names a shortened chain never created is a skipped step in every world.
     */
    static final class NextAction implements Action.Dependent<Lockstep>
    {
        @Override
        public Arbitrary<Transformer<Lockstep>> transformer(final Lockstep state)
        {
            return new StepArbitrary(state.snapshot());
        }
    }

    /** One step drawn from a snapshot: a number, decoded; the number shrinks, and the step with it. */
    private record StepArbitrary(Snapshot snapshot) implements Arbitrary<Transformer<Lockstep>>
    {
        @Override
        public RandomGenerator<Transformer<Lockstep>> generator(final int genSize)
        {
            final RandomGenerator<Long> g = StepBits.generator(genSize);
            return random -> new DecodedStep(snapshot, g.next(random));
        }

        @Override
        public RandomGenerator<Transformer<Lockstep>> generatorWithEmbeddedEdgeCases(final int genSize)
        {
            return generator(genSize);
        }

        @Override
        public boolean isGeneratorMemoizable()
        {
            return false;
        }

        @Override
        public EdgeCases<Transformer<Lockstep>> edgeCases(final int maxEdgeCases)
        {
            return EdgeCases.none();
        }

        @Override
        public Optional<ExhaustiveGenerator<Transformer<Lockstep>>> exhaustive(final long maxNumberOfSamples)
        {
            return Optional.empty();
        }
    }

    static Transformer<Lockstep> transformer(final KeyOp op)
    {
        return op == null ? Transformer.noop() : new OpTransformer(op);
    }

    /** The kinds of action, in the order a draw reads them, and their weights. */
    private static final Step[] STEPS = {new RemoteAction(), new RegAction(), new DeregAction(), new ReregAction(),
        new MmapAction(), new CpuWriteAction(), new CpuReadAction(), new AllocMwAction(), new BindAction(),
        new UnbindAction(), new LocalInvAction(), new DeallocAction(), new MunmapAction(), new MadviseAction(),
        new ForkAction(), new ReclaimAction(), new CompactAction(), new AllocPdAction(), new ClosePdAction(),
        new CloseContextAction()};
    private static final int[] WEIGHTS = {16, 6, 3, 3, 2, 3, 2, 2, 4, 1, 2, 1, 2, 2, 1, 1, 1, 1, 1, 1};

    /** The action {@code bits} names in the snapshot; null when no kind of action can run. */
    static KeyOp decode(final Snapshot s, final long bits)
    {
        final Draw d = new Draw(bits);
        final int[] w = new int[STEPS.length];
        boolean any = false;
        for (int i = 0; i < STEPS.length; i++)
        {
            if (STEPS[i].can(s))
            {
                w[i] = WEIGHTS[i];
                any = true;
            }
        }
        return any ? STEPS[d.weighted(w)].op(s, d) : null;
    }

    /** A kind of action: whether it can be drawn from a snapshot, and its values read from a draw. */
    interface Step
    {
        boolean can(Snapshot s);

        KeyOp op(Snapshot s, Draw d);
    }

    // ------------------------------------------------------------------ helpers

    /** Mostly one of {@code preferred}, else one of {@code all}. */
    static <T> T mostly(final Draw d, final List<T> preferred, final List<T> all, final int preferredWeight)
    {
        if (preferred.isEmpty())
        {
            return d.of(all);
        }
        if (all.isEmpty())
        {
            return d.of(preferred);
        }
        return d.weighted(preferredWeight, 1) == 0 ? d.of(preferred) : d.of(all);
    }

    /** An offset in a buffer of {@code len} bytes, often near a page boundary. */
    static long offset(final Draw d, final long len)
    {
        final long pages = len / PAGE;
        return switch (d.weighted(2, 1, 2))
        {
            case 0 -> d.between(0, len - 1);
            case 1 -> d.between(0, pages - 1) * PAGE;
            default ->
            {
                final long p = d.between(1, pages);
                yield Math.max(0, p * PAGE - d.between(1, 40));
            }
        };
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

    /** Where each group of {@link #REG_ACCESS} starts, and the groups' weights. */
    private static final int[] REG_ACCESS_GROUPS = {0, 2, 4, 9, 11, 13};
    private static final int[] REG_ACCESS_WEIGHTS = {6, 8, 6, 2, 1};

    /** Mostly valid, remote access sets; the last two break ib_check_mr_access (EINVAL). */
    static Set<Access> regAccess(final Draw d)
    {
        final int g = d.weighted(REG_ACCESS_WEIGHTS);
        return REG_ACCESS.get(REG_ACCESS_GROUPS[g] + d.below(REG_ACCESS_GROUPS[g + 1] - REG_ACCESS_GROUPS[g]));
    }

    private static final List<Set<Access>> WINDOW_RIGHTS = List.of(EnumSet.of(Access.REMOTE_READ,
        Access.REMOTE_WRITE), EnumSet.of(Access.REMOTE_READ), EnumSet.of(Access.REMOTE_WRITE),
        EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC));

    static Set<Access> windowRights(final Draw d)
    {
        return d.weighted(6, 1) == 0 ? d.of(WINDOW_RIGHTS) : EnumSet.noneOf(Access.class);
    }

    /** A range [off, off+len) of a buffer of {@code size} bytes: page-aligned or not, within it. */
    static long[] range(final Draw d, final long size)
    {
        if (d.weighted(1, 1) == 0)
        {
            final long p = d.between(0, size / PAGE - 1);
            return new long[] {p * PAGE, d.between(1, size / PAGE - p) * PAGE};
        }
        final long off = offset(d, size);
        return new long[] {off, d.between(1, size - off)};
    }

    // ------------------------------------------------------------------ remote access

    static final class RemoteAction implements Step
    {
        private static final KeyOps.Op[] OPS = {KeyOps.Op.READ, KeyOps.Op.WRITE, KeyOps.Op.FAA, KeyOps.Op.CAS};

        @Override
        public boolean can(final Snapshot s)
        {
            return !s.keys().isEmpty() && !s.livePds().isEmpty() && !s.bufs().isEmpty();
        }

        @Override
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final KeyOps.Op op = OPS[d.weighted(4, 4, 1, 1)];
            // Mostly a key that grants the operation now, else any key that names something, else any key.
            final Access right = op == KeyOps.Op.READ ? Access.REMOTE_READ : op == KeyOps.Op.WRITE
                ? Access.REMOTE_WRITE : Access.REMOTE_ATOMIC;
            final List<KeyS> granting = new ArrayList<>();
            final List<KeyS> naming = new ArrayList<>();
            // A key whose MR is gone and whose MPT index was taken again since: valid again or not?
            final List<KeyS> staleReused = new ArrayList<>();
            for (final KeyS k : s.keys())
            {
                if (k.newest() && k.grants().contains(right))
                {
                    granting.add(k);
                }
                if (k.newest() && k.pd() >= 0)
                {
                    naming.add(k);
                }
                if (k.staleReused())
                {
                    staleReused.add(k);
                }
            }
            final List<KeyS> chosen = switch (d.weighted(2, staleReused.isEmpty() ? 0 : 4, naming.isEmpty() ? 0 : 1,
                granting.isEmpty() ? 0 : 14))
            {
                case 0 -> s.keys();
                case 1 -> staleReused;
                case 2 -> naming;
                default -> granting;
            };
            return access(s, d.of(chosen), op, d);
        }

        private static KeyOp access(final Snapshot s, final KeyS k, final KeyOps.Op op, final Draw d)
        {
            final int p = k.pd() >= 0 && s.livePds().contains(k.pd()) && d.weighted(6, 1) == 0 ? k.pd()
                : d.of(s.livePds());
            final long lo = k.lo();
            final long len = k.len();
            final boolean atomic = op == KeyOps.Op.FAA || op == KeyOps.Op.CAS;
            final int size = atomic ? 8 : d.weighted(3, 1) == 0 ? d.between(1, 64) : d.between(1, 8);
            final long maxStart = lo + Math.max(0, len - size);
            final long a;
            final int where = atomic ? d.weighted(8, 1, 1) : d.weighted(6, 1);
            if (where == 0)
            {
                if (atomic)
                {
                    a = ((lo + 7) & -8L) + d.between(0, Math.max(0, (len - 8) / 8)) * 8;
                }
                else if (d.weighted(3, 2) == 0)
                {
                    a = d.between(lo, maxStart);
                }
                else
                {
                    a = Math.max(lo, Math.min(maxStart, ((lo + len / 2) & -PAGE) - d.between(1, 63)));
                }
            }
            else if (where == 1)
            {
                final long edge = d.of(lo - 1, lo + len - size + 1, lo + len - 1, lo);
                a = atomic ? edge & -8L : edge;
            }
            else
            {
                a = d.between(lo, maxStart) | 1;
            }
            final Tuple.Tuple2<String, Long> rel = s.relative(a);
            return switch (op)
            {
                case WRITE -> new KeyOps.Remote(op, p, k.label(), rel.get1(), rel.get2(), size, d.text(size), 0, 0);
                case READ -> new KeyOps.Remote(op, p, k.label(), rel.get1(), rel.get2(), size, null, 0, 0);
                case FAA -> new KeyOps.Remote(op, p, k.label(), rel.get1(), rel.get2(), size, null, d.between(1,
                    1000), 0);
                // Compare 0 matches memory nothing wrote yet, so both outcomes of a CAS come up.
                case CAS ->
                {
                    final long compare = d.weighted(2, 1) == 0 ? 0 : d.between(1, 1000);
                    yield new KeyOps.Remote(op, p, k.label(), rel.get1(), rel.get2(), size, null, compare,
                        d.between(0, 1L << 40));
                }
            };
        }
    }
}
