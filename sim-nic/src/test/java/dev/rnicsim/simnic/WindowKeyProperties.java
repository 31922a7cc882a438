package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rnicsim.mtt.AdapterTables;
import dev.rnicsim.simnic.KeyRig.Pair;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WcStatus;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashSet;
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
 * Random sequences of memory-window operations on one MR of host b (type 1 binds in and outside the MR, unbinds,
 * type 2 binds and LOCAL_INV of any key ever issued, deallocation and reallocation of windows) and remote READs
 * and WRITEs from host a with any key ever issued at any address around the MR, against a reference model of the
 * windows. Every step's outcome must be the model's: an access succeeds iff its key is a bound window's current
 * key, the range lies inside the window, the window grants the right, and (type 2) it arrives through the QP the
 * window was bound on. After every step, every key ever issued is also checked against the adapter tables at the
 * edges of its window, for every right and QP, and the MR's bytes against the model's copy.
 *
 * <p>An error completion moves both QPs of the pair to ERR, so every refused step continues on a new pair; type 2
 * windows bound through an old pair's responder then answer no QP any more, as on a real device.
 */
class WindowKeyProperties
{
    private static final long PAGE = 4096;
    private static final long MR_BYTES = 8 * PAGE;
    private static final int TYPE1_SLOTS = 2;
    private static final int SLOTS = 4;
    private static final List<Access> RIGHTS = List.of(Access.REMOTE_READ, Access.REMOTE_WRITE,
        Access.REMOTE_ATOMIC);

    @Property(tries = 200)
    void onlyTheCurrentKeysOfBoundWindowsGrantAccessWithinTheirBoundsAndRights(
        @ForAll("chains") final ActionChain<World> chain)
    {
        chain.withInvariant("tables, windows and memory agree with the model", World::check).run();
        // Guards against a generator that only ever produces refused accesses.
        Statistics.label("access").coverage(c ->
        {
            c.check("granted type 1").percentage(p -> p >= 10);
            c.check("granted type 2").count(n -> n >= 20);
            c.check("refused").percentage(p -> p >= 10);
        });
    }

    @Provide
    Arbitrary<ActionChain<World>> chains()
    {
        return ActionChain.startWith(World::new)
            .withAction(4, new BindType1())
            .withAction(1, new UnbindType1())
            .withAction(3, new BindType2())
            .withAction(2, new LocalInv())
            .withAction(1, new Realloc())
            .withAction(6, new RemoteAccess())
            .withMaxTransformations(30);
    }

    // ------------------------------------------------------------------ the system and its model

    /** One window of the model: what it is bound to, if anything. */
    static final class Slot
    {
        final MwType type;
        MemoryWindow mw;
        /** Its key in the tables (for type 1 possibly behind {@code mw.rkey()} after a failed bind). */
        int key;
        boolean bound;
        long lo;
        long length;
        Set<Access> rights = Set.of();
        /** The responder QP a type 2 window was bound through. */
        QueuePair qp;

        Slot(final MwType type)
        {
            this.type = type;
        }

        void unbind(final int newKey)
        {
            key = newKey;
            bound = false;
            lo = 0;
            length = 0;
            rights = Set.of();
            qp = null;
        }

        @Override
        public String toString()
        {
            return "type " + type.code() + " key 0x" + Integer.toHexString(key) + (bound ? " [0x"
                + Long.toHexString(lo) + ", +" + length + ") " + rights : " unbound");
        }
    }

    /** Two connected hosts, the MR, four windows, and the model. */
    static final class World
    {
        final KeyRig k;
        final long base;
        final MemoryRegion mr;
        final int pdNum;
        final Slot[] slots = new Slot[SLOTS];
        /** Every key a window has had, and the MR's. */
        final Set<Integer> issued = new LinkedHashSet<>();
        /** What the MR's bytes must be. */
        final byte[] shadow;
        final long bindsBefore;
        final long invalidationsBefore;
        Pair pair;
        long binds;
        long invalidations;
        int seed = 1;

        World()
        {
            k = KeyRig.connectx5();
            base = k.rig.bufferB(MR_BYTES);
            shadow = RuleRig.pattern((int)MR_BYTES, 17);
            k.rig.processB().write(base, shadow);
            mr = k.rig.pdB.regMr(base, MR_BYTES, KeyRig.bindable());
            pdNum = ((SimPd)k.rig.pdB).pdNum();
            pair = k.initial();
            issued.add(mr.lkey());
            for (int i = 0; i < SLOTS; i++)
            {
                slots[i] = new Slot(i < TYPE1_SLOTS ? MwType.TYPE_1 : MwType.TYPE_2);
                slots[i].mw = k.rig.pdB.allocMw(slots[i].type);
                slots[i].key = slots[i].mw.rkey();
                issued.add(slots[i].key);
            }
            bindsBefore = k.deviceB().counter(SimCounter.MW_BINDS);
            invalidationsBefore = k.deviceB().counter(SimCounter.KEY_INVALIDATIONS);
        }

        /** The model's answer: does {@code key} grant {@code right} on [addr, addr+length) through {@code qp}? */
        boolean grants(final int key, final Access right, final long addr, final long length, final QueuePair qp)
        {
            for (final Slot s : slots)
            {
                if (s.key == key && s.bound)
                {
                    return (s.type == MwType.TYPE_1 || s.qp == qp) && s.rights.contains(right) && length >= 0
                        && addr >= s.lo && addr + length <= s.lo + s.length;
                }
            }
            return false;
        }

        Slot slotOf(final int key)
        {
            for (final Slot s : slots)
            {
                if (s.key == key)
                {
                    return s;
                }
            }
            return null;
        }

        /** After an error completion both QPs are in ERR: continue on a new pair. */
        private void newPair()
        {
            pair = k.pair();
        }

        void bind1(final int slot, final long lo, final long length, final Set<Access> rights)
        {
            final Slot s = slots[slot];
            final boolean inside = lo >= 0 && length >= 1 && lo + length <= MR_BYTES;
            final long wrId = k.nextWrId();
            final int before = s.mw.rkey();

            final int rkey = pair.b().bindMw(s.mw, wrId, KeyRig.SIGNALED, new MwBindInfo(mr, base + lo, length,
                rights));

            issued.add(rkey);
            assertThat(rkey).as("ibv_inc_rkey at post time").isEqualTo(SendWr.incRkey(before));
            final WcStatus status = k.completionOf(pair.b(), wrId).status();
            if (inside)
            {
                assertThat(status).as("bind of %s inside the MR", s).isEqualTo(WcStatus.SUCCESS);
                s.key = rkey;
                s.bound = true;
                s.lo = base + lo;
                s.length = length;
                s.rights = Set.copyOf(rights);
                binds++;
                invalidations++;
            }
            else
            {
                assertThat(status).as("bind of %s outside the MR", s).isEqualTo(WcStatus.MW_BIND_ERR);
                newPair();
                // The refused bind changed nothing but the rkey the window shows (set at post time). Whether a
                // later bind that names that rkey may succeed is the provider's (rxe_bind_mw refuses a key other
                // than the window's): like an application that does not restore the key, drop the window.
                check();
                realloc(slot);
            }
        }

        void unbind1(final int slot)
        {
            final Slot s = slots[slot];
            final int rkey = k.bind1(pair.b(), s.mw, MwBindInfo.unbind());
            issued.add(rkey);
            s.unbind(rkey);
            binds++;
            invalidations++;
        }

        void bind2(final int slot, final long lo, final long length, final Set<Access> rights)
        {
            final Slot s = slots[slot];
            final int newKey = SendWr.incRkey(s.mw.rkey());
            issued.add(newKey);

            final WcStatus status = k.post(pair.b(), SendWr.bindMw(k.nextWrId(), s.mw, newKey, new MwBindInfo(mr,
                base + lo, length, rights))).status();

            if (s.bound)
            {
                assertThat(status).as("bind of the bound %s", s).isEqualTo(WcStatus.MW_BIND_ERR);
                newPair();
                return;
            }
            assertThat(status).as("bind of %s", s).isEqualTo(WcStatus.SUCCESS);
            s.key = newKey;
            s.bound = true;
            s.lo = base + lo;
            s.length = length;
            s.rights = Set.copyOf(rights);
            s.qp = pair.b();
            binds++;
            invalidations++;
        }

        void localInv(final int key)
        {
            final Slot s = slotOf(key);
            // mlx5 (INVALIDATION_CHECKS_OWNER): a bound type 2 window is invalidated only through its own QP.
            final boolean expected = s != null && s.type == MwType.TYPE_2 && (!s.bound || s.qp == pair.b());

            final WcStatus status = k.post(pair.b(), SendWr.localInv(k.nextWrId(), key)).status();

            if (expected)
            {
                assertThat(status).as("LOCAL_INV of %s", s).isEqualTo(WcStatus.SUCCESS);
                s.unbind(key);
                invalidations++;
            }
            else
            {
                assertThat(status).as("LOCAL_INV of 0x%x (%s)", key, s).isEqualTo(WcStatus.LOC_QP_OP_ERR);
                newPair();
            }
        }

        void realloc(final int slot)
        {
            final Slot s = slots[slot];
            s.mw.close();
            invalidations++;
            s.mw = k.rig.pdB.allocMw(s.type);
            s.unbind(s.mw.rkey());
            issued.add(s.key);
        }

        void access(final int key, final boolean write, final long addr, final int length)
        {
            final Access right = write ? Access.REMOTE_WRITE : Access.REMOTE_READ;
            final boolean expected = grants(key, right, addr, length, pair.b());
            final int seed = this.seed++;

            final WcStatus status = write ? k.write(pair.a(), addr, key, length, seed)
                : k.read(pair.a(), addr, key, length);

            final Slot s = slotOf(key);
            Statistics.label("access").collect(expected ? "granted type " + s.type.code() : "refused");
            Statistics.label("access key").collect(s == null ? "stale or MR" : s.bound ? "bound type " + s.type.code()
                : "unbound");
            if (!expected)
            {
                assertThat(status).as("%s of 0x%x+%d with 0x%x (%s)", right, addr, length, key, slotOf(key))
                    .isEqualTo(WcStatus.REM_ACCESS_ERR);
                newPair();
                return;
            }
            assertThat(status).as("%s of 0x%x+%d with 0x%x (%s)", right, addr, length, key, slotOf(key))
                .isEqualTo(WcStatus.SUCCESS);
            final int at = (int)(addr - base);
            if (write)
            {
                System.arraycopy(RuleRig.pattern(length, seed), 0, shadow, at, length);
            }
            else
            {
                assertThat(k.scratchBytes(length)).as("bytes read").isEqualTo(Arrays.copyOfRange(shadow, at,
                    at + length));
            }
        }

        /** The invariant checked after every step. */
        void check()
        {
            assertThat(pair.a().state()).isEqualTo(QpState.RTS);
            assertThat(pair.b().state()).isEqualTo(QpState.RTS);
            final SimDevice device = k.deviceB();
            final AdapterTables tables = device.tables();
            assertThat(tables.windowCount()).isEqualTo(SLOTS);
            int bound = 0;
            final List<QueuePair> qps = new ArrayList<>(List.of(pair.b()));
            for (final Slot s : slots)
            {
                final SimMw sim = (SimMw)s.mw;
                assertThat(sim.tableKey()).as("table key of %s", s).isEqualTo(s.key);
                assertThat(sim.isBound()).as("bound: %s", s).isEqualTo(s.bound);
                assertThat(tables.isWindow(s.key)).isTrue();
                if (s.type == MwType.TYPE_2)
                {
                    assertThat(s.mw.rkey()).isEqualTo(s.key);
                }
                if (s.bound)
                {
                    bound++;
                    assertThat(sim.addr()).isEqualTo(s.lo);
                    assertThat(sim.lengthBytes()).isEqualTo(s.length);
                    assertThat(sim.access()).isEqualTo(s.rights.isEmpty() ? EnumSet.noneOf(Access.class)
                        : EnumSet.copyOf(s.rights));
                    assertThat(sim.boundQp()).isSameAs(s.qp);
                    if (s.qp != null && !qps.contains(s.qp))
                    {
                        qps.add(s.qp);
                    }
                }
            }
            assertThat(((SimMr)mr).boundWindows()).isEqualTo(bound);
            assertThat(device.counter(SimCounter.MW_BINDS) - bindsBefore).isEqualTo(binds);
            assertThat(device.counter(SimCounter.KEY_INVALIDATIONS) - invalidationsBefore).isEqualTo(invalidations);
            for (final int key : issued)
            {
                checkKey(tables, key, qps);
            }
            assertThat(k.rig.processB().read(base, (int)MR_BYTES)).as("the MR's bytes").isEqualTo(shadow);
        }

        /** Compares the tables with the model for {@code key} at the edges of its window (or the MR). */
        private void checkKey(final AdapterTables tables, final int key, final List<QueuePair> qps)
        {
            final Slot s = slotOf(key);
            final List<long[]> probes = new ArrayList<>(List.of(new long[] {base, 1},
                new long[] {base + MR_BYTES - 1, 1}, new long[] {base, MR_BYTES}));
            if (s != null && s.bound)
            {
                final long lo = s.lo;
                final long hi = s.lo + s.length;
                probes.addAll(List.of(new long[] {lo, 1}, new long[] {hi - 1, 1}, new long[] {lo, s.length},
                    new long[] {lo - 1, 1}, new long[] {hi, 1}, new long[] {lo, s.length + 1},
                    new long[] {lo - 1, s.length + 2}));
            }
            final int mrKey = mr.lkey();
            for (final long[] p : probes)
            {
                for (final Access right : RIGHTS)
                {
                    for (final QueuePair qp : qps)
                    {
                        final boolean expected = grants(key, right, p[0], p[1], qp);
                        final long dma = tables.translate(key, pdNum, qp.qpNum(), right.bit(), p[0], p[1]);
                        assertThat(dma >= 0).as("key 0x%x (%s) %s of 0x%x+%d through QP 0x%x: %s", key, s, right,
                            p[0], p[1], qp.qpNum(), dev.rnicsim.mtt.KeyCheck.ofTranslation(dma)).isEqualTo(expected);
                        if (expected)
                        {
                            assertThat(dma).as("the window translates as its MR")
                                .isEqualTo(tables.translate(mrKey, pdNum, 0, p[0], p[1]));
                        }
                    }
                    assertThat(tables.translate(key, pdNum + 1, pair.b().qpNum(), right.bit(), p[0], p[1]))
                        .as("another PD").isNegative();
                }
            }
        }

        @Override
        public String toString()
        {
            return Arrays.toString(slots);
        }
    }

    // ------------------------------------------------------------------ actions

    private static Arbitrary<Set<Access>> rights()
    {
        return Arbitraries.subsetOf(RIGHTS);
    }

    /** A range of the MR as (offset, length), both within it, length at least 1. */
    private static Arbitrary<long[]> insideRange()
    {
        final Arbitrary<Long> offsets = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.longs().between(0,
            MR_BYTES - 1)), Tuple.of(1, Arbitraries.longs().between(0, 7).map(p -> p * PAGE)));
        return offsets.flatMap(off -> Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.longs().between(1, MR_BYTES - off)),
            Tuple.of(1, Arbitraries.just(MR_BYTES - off))).map(len -> new long[] {off, len}));
    }

    /** A range crossing the start or the end of the MR. */
    private static Arbitrary<long[]> outsideRange()
    {
        return Arbitraries.oneOf(
            Arbitraries.longs().between(1, PAGE).map(before -> new long[] {-before, before + 1}),
            Arbitraries.longs().between(0, MR_BYTES - 1).flatMap(off -> Arbitraries.longs()
                .between(MR_BYTES - off + 1, MR_BYTES - off + PAGE).map(len -> new long[] {off, len})));
    }

    private static String describe(final long[] range, final Set<Access> rights)
    {
        return "[+0x" + Long.toHexString(range[0]) + ", len " + range[1] + ") " + rights;
    }

    static final class BindType1 implements Action.Independent<World>
    {
        @Override
        public Arbitrary<Transformer<World>> transformer()
        {
            final Arbitrary<long[]> ranges = Arbitraries.frequencyOf(Tuple.of(5, insideRange()),
                Tuple.of(1, outsideRange()));
            return Combinators.combine(Arbitraries.integers().between(0, TYPE1_SLOTS - 1), ranges, rights())
                .as((slot, range, rights) -> Transformer.mutate("bind type 1 #" + slot + " " + describe(range, rights),
                    w -> w.bind1(slot, range[0], range[1], rights)));
        }
    }

    static final class UnbindType1 implements Action.Independent<World>
    {
        @Override
        public Arbitrary<Transformer<World>> transformer()
        {
            return Arbitraries.integers().between(0, TYPE1_SLOTS - 1).map(slot -> Transformer.mutate(
                "unbind type 1 #" + slot, w -> w.unbind1(slot)));
        }
    }

    static final class BindType2 implements Action.Independent<World>
    {
        @Override
        public Arbitrary<Transformer<World>> transformer()
        {
            return Combinators.combine(Arbitraries.integers().between(TYPE1_SLOTS, SLOTS - 1), insideRange(),
                rights()).as((slot, range, rights) -> Transformer.mutate("bind type 2 #" + slot + " "
                    + describe(range, rights), w -> w.bind2(slot, range[0], range[1], rights)));
        }
    }

    /** LOCAL_INV of a type 2 window's current key, mostly, or of any key ever issued. */
    static final class LocalInv implements Action.Dependent<World>
    {
        @Override
        public Arbitrary<Transformer<World>> transformer(final World w)
        {
            final List<Integer> current = new ArrayList<>();
            for (int i = TYPE1_SLOTS; i < SLOTS; i++)
            {
                current.add(w.slots[i].key);
            }
            final Arbitrary<Integer> keys = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.of(current)),
                Tuple.of(1, Arbitraries.of(List.copyOf(w.issued))));
            return keys.map(key -> Transformer.mutate("LOCAL_INV 0x" + Integer.toHexString(key),
                world -> world.localInv(key)));
        }
    }

    static final class Realloc implements Action.Independent<World>
    {
        @Override
        public Arbitrary<Transformer<World>> transformer()
        {
            return Arbitraries.integers().between(0, SLOTS - 1).map(slot -> Transformer.mutate(
                "dealloc and realloc #" + slot, w -> w.realloc(slot)));
        }
    }

    /**
     * A remote READ or WRITE with a bound window's key inside or at the edges of its window, mostly with a right it
     * grants and through the QP it answers, or with any key ever issued anywhere around the MR.
     */
    static final class RemoteAccess implements Action.Dependent<World>
    {
        @Override
        public Arbitrary<Transformer<World>> transformer(final World w)
        {
            final List<Slot> usable = new ArrayList<>();
            final List<Slot> other = new ArrayList<>();
            for (final Slot s : w.slots)
            {
                if (s.bound)
                {
                    (s.type == MwType.TYPE_1 || s.qp == w.pair.b() ? usable : other).add(s);
                }
            }
            final Arbitrary<long[]> anywhere = Combinators.combine(
                Arbitraries.longs().between(w.base - PAGE, w.base + MR_BYTES + PAGE),
                Arbitraries.longs().between(1, 2 * PAGE), Arbitraries.of(List.copyOf(w.issued)),
                Arbitraries.of(0L, 1L)).as((addr, len, key, write) -> new long[] {key, addr, len, write});
            final List<Tuple.Tuple2<Integer, Arbitrary<long[]>>> choices = new ArrayList<>();
            choices.add(Tuple.of(1, anywhere));
            if (!usable.isEmpty())
            {
                choices.add(Tuple.of(4, Arbitraries.of(usable).flatMap(RemoteAccess::windowAccess)));
            }
            if (!other.isEmpty())
            {
                choices.add(Tuple.of(1, Arbitraries.of(other).flatMap(RemoteAccess::windowAccess)));
            }
            return Arbitraries.frequencyOf(choices).map(t -> Transformer.mutate((t[3] == 1 ? "WRITE" : "READ")
                + " 0x" + Long.toHexString(t[1]) + "+" + t[2] + " rkey 0x" + Integer.toHexString((int)t[0]),
                world -> world.access((int)t[0], t[3] == 1, t[1], (int)t[2])));
        }

        /** Inside the window, or one byte over one of its edges; mostly with a right the window grants. */
        private static Arbitrary<long[]> windowAccess(final Slot s)
        {
            final long key = s.key;
            final long lo = s.lo;
            final long length = s.length;
            final long max = Math.min(length, 2 * PAGE);
            final List<Long> granted = new ArrayList<>();
            if (s.rights.contains(Access.REMOTE_READ))
            {
                granted.add(0L);
            }
            if (s.rights.contains(Access.REMOTE_WRITE))
            {
                granted.add(1L);
            }
            final Arbitrary<Long> write = granted.isEmpty() ? Arbitraries.of(0L, 1L)
                : Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.of(granted)), Tuple.of(1, Arbitraries.of(0L, 1L)));
            final Arbitrary<long[]> inside = Arbitraries.longs().between(1, max).flatMap(len -> Arbitraries.longs()
                .between(lo, lo + length - len).map(addr -> new long[] {key, addr, len}));
            final Arbitrary<long[]> edges = Arbitraries.longs().between(1, max).flatMap(len -> Arbitraries.of(
                new long[] {key, lo - 1, len}, new long[] {key, lo + length - len + 1, len}));
            return Combinators.combine(Arbitraries.frequencyOf(Tuple.of(4, inside), Tuple.of(1, edges)), write)
                .as((t, wr) -> new long[] {t[0], t[1], t[2], wr});
        }
    }
}
