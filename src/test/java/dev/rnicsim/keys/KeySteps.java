package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyChains.*;

import dev.rnicsim.keys.KeyChains.Snapshot;
import dev.rnicsim.keys.KeyChains.Step;
import dev.rnicsim.keys.KeyOps.KeyOp;
import dev.rnicsim.keys.WorldModel.Buf;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwType;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Tuple;

/**
 * The kinds of action of {@link KeyChains} that make, change and end keys: registration (reg, dereg, rereg) and
 * memory windows (alloc, bind, unbind, LOCAL_INV, dealloc).
 */
final class KeySteps
{
    private KeySteps()
    {
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final int pd = d.of(s.livePds());
            final Buf b = d.of(s.bufs());
            final Set<Access> access = regAccess(d);
            final long[] rg = range(d, b.lengthBytes());
            return new KeyOps.Reg("mr" + s.nextMr(), pd, b.name(), rg[0], rg[1], access, s.nextKey());
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.Dereg(mostly(d, s.liveMrs(), s.mrs(), 6).name());
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final int keyN = s.nextKey();
            final MrS m = mostly(d, s.liveMrs(), s.mrs(), 8);
            final int kind = d.between(0, 19);
            if (kind < 8)
            {
                return new KeyOps.Rereg(m.name(), null, null, 0, 0, regAccess(d), keyN);
            }
            if (kind < 14 || kind == 18)
            {
                final Buf b = d.of(s.bufs());
                final Set<Access> a = regAccess(d);
                final long[] rg = range(d, b.lengthBytes());
                return new KeyOps.Rereg(m.name(), null, b.name(), rg[0], rg[1], kind == 18 ? a : null, keyN);
            }
            if (kind < 18)
            {
                return new KeyOps.Rereg(m.name(), mostly(d, s.livePds(), s.allPds(), 5), null, 0, 0, null, keyN);
            }
            return new KeyOps.Rereg(m.name(), null, null, 0, 0, null, keyN);
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final int pd = d.of(s.livePds());
            return new KeyOps.AllocMw("win" + s.nextMw(), pd, d.of(MwType.TYPE_1, MwType.TYPE_2), s.nextKey());
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final List<MwS> windows = s.liveWindows(null);
            final List<MrS> live = s.liveMrs();
            final List<MwS> bindable = new ArrayList<>(windows.size());
            for (final MwS x : windows)
            {
                for (final MrS m : live)
                {
                    if (m.pd() == x.pd() && m.access().contains(Access.MW_BIND))
                    {
                        bindable.add(x);
                        break;
                    }
                }
            }
            final MwS w = mostly(d, bindable, windows, 5);
            final List<MrS> good = new ArrayList<>(live.size());
            for (final MrS m : live)
            {
                if (m.pd() == w.pd() && m.access().contains(Access.MW_BIND))
                {
                    good.add(m);
                }
            }
            final MrS m = mostly(d, good, s.mrs(), 8);
            final long len = m.len();
            final long off;
            final long length;
            if (d.weighted(6, 1) == 0)
            {
                off = d.between(0, len - 1);
                length = d.between(1, len - off);
            }
            else
            {
                final long e = d.between(1, 64);
                switch (d.below(3))
                {
                    case 0 ->
                    {
                        off = -e;
                        length = len;
                    }
                    case 1 ->
                    {
                        off = 0;
                        length = len + e;
                    }
                    default ->
                    {
                        off = len - 1;
                        length = 1 + e;
                    }
                }
            }
            return new KeyOps.Bind(w.name(), w.pd(), m.name(), off, length, windowRights(d), s.nextKey());
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final MwS w = d.of(s.liveWindows(MwType.TYPE_1));
            return new KeyOps.Unbind(w.name(), w.pd(), s.nextKey());
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            final List<Tuple.Tuple2<Integer, Integer>> current = new ArrayList<>(s.type2Keys().size());
            for (final Tuple.Tuple2<Integer, Integer> t : s.type2Keys())
            {
                if (s.livePds().contains(t.get1()))
                {
                    current.add(t);
                }
            }
            if (!current.isEmpty() && d.weighted(3, 1) == 0)
            {
                final Tuple.Tuple2<Integer, Integer> t = d.of(current);
                return new KeyOps.LocalInv(t.get1(), t.get2());
            }
            final int pd = d.of(s.livePds());
            return new KeyOps.LocalInv(pd, d.of(s.keys()).label());
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
        public KeyOp op(final Snapshot s, final Draw d)
        {
            return new KeyOps.Dealloc(mostly(d, s.liveWindows(null), s.mws(), 8).name());
        }
    }
}
