package dev.rnicsim.keys;

import static dev.rnicsim.keys.KeyWorld.run;

import dev.rnicsim.keys.WorldModel.KeyName;
import dev.rnicsim.keys.WorldModel.MrM;
import dev.rnicsim.keys.WorldModel.MwM;
import dev.rnicsim.keys.WorldModel.Pair;
import dev.rnicsim.keys.WorldModel.PdM;
import dev.rnicsim.keys.WorldModel.Qp;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WrOpcode;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Memory windows in a {@link KeyWorld}: allocation, binds (type 1 through ibv_bind_mw, type 2 through a posted
 * BIND_MW), unbinds, LOCAL_INV and deallocation, each checked against the model's reasons to refuse
 * (rxe_check_bind_mw's order) and its keys (ibv_inc_rkey at post). Not thread safe.
 */
final class Windows
{
    private final KeyWorld world;

    Windows(final KeyWorld world)
    {
        this.world = world;
    }

    // ------------------------------------------------------------------ actions: windows

    void allocMw(final String mw, final int pdIndex, final MwType type, final int keyN)
    {
        final Script.Line line = () -> "mw " + mw + " pd_b" + pdIndex + " type=" + type.code();
        if (!world.pdBound(pdIndex) && world.skipUnbound(line, "pd_b" + pdIndex))
        {
            world.issueKey(keyN, mw, null, 0, 0, 0, false);
            return;
        }
        world.start(line);
        final PdM pd = world.pds.get(pdIndex);
        final String predicted = !pd.live ? "EINVAL" : world.mpt.full() ? "ENOMEM" : "ok";
        world.expectLine(predicted);
        final dev.rnicsim.verbs.MemoryWindow[] got = new dev.rnicsim.verbs.MemoryWindow[1];
        world.expectOutcome(predicted, run(() -> got[0] = pd.sim.allocMw(type)));
        if (!predicted.equals("ok"))
        {
            world.issueKey(keyN, mw, null, 0, 0, 0, false);
            return;
        }
        final MwM w = new MwM(mw, type);
        w.sim = (SimMw)got[0];
        w.pd = pd;
        w.live = true;
        w.tableKey = w.sim.rkey();
        w.shownKey = w.tableKey;
        world.allocatedKey(mw, "rkey", w.tableKey, true);
        world.putWindow(w);
        world.bound.add(mw);
        world.issueKey(keyN, mw, "rkey", w.shownKey, 0, 0, false);
    }

    void deallocated(final MwM w)
    {
        if (w.bound)
        {
            w.mr.windows--;
        }
        world.mpt.freed(w.tableKey, true);
        w.live = false;
        w.bound = false;
        // deallocMw: the handle's rkey shows the table key again.
        w.shownKey = w.tableKey;
    }

    void dealloc(final String mw)
    {
        final Script.Line line = () -> "close " + mw;
        if (world.skipUnbound(line, mw))
        {
            return;
        }
        world.start(line);
        final MwM w = world.mws.get(mw);
        world.expectOutcome("ok", run(() -> w.sim.close()));
        if (w.live)
        {
            deallocated(w);
        }
    }

    /**
     * A bind (type 1: ibv_bind_mw; type 2: a posted BIND_MW with the next key byte) of {@code [mr+off, +len)} with
     * {@code rights}, through the QP of pair {@code pdIndex}.
     */
    void bind(final String mw, final int pdIndex, final String mr, final long off, final long len,
        final Set<Access> rights, final int keyN)
    {
        final Script.Line line = () -> "bind " + mw + " qb" + pdIndex + " " + mr + " addr=" + Script.at(mr, off)
            + " length=" + Script.size(len) + " access=" + KeyOps.words(rights);
        if (!(world.bound.contains(mw) && world.bound.contains(mr) && world.pdBound(pdIndex))
            && world.skipUnbound(line, mw, mr, "pd_b" + pdIndex))
        {
            issueKeyOfWindow(keyN, mw);
            return;
        }
        final PdM pd = postingPd(line, pdIndex, keyN, mw, "bind");
        if (pd == null)
        {
            return;
        }
        final MwM w = world.mws.get(mw);
        final MrM m = world.mrs.get(mr);
        // The runner evaluates addr=mr+off from the MR's iova, as here.
        final long addr = m.sim.iova() + off;
        final Pair pair = pd.pair;
        final MwBindInfo info = new MwBindInfo(m.sim, addr, len, rights);
        final long wrId = world.nextWrId++;
        if (w.type == MwType.TYPE_1)
        {
            final String atPost = !w.live || !pair.qb.live ? "EINVAL" : m.pd != w.pd ? "EPERM" : "ok";
            if (!atPost.equals("ok"))
            {
                world.expectLine(atPost);
                world.expectOutcome(atPost, run(() -> pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
                    info)));
                issueKeyOfWindow(keyN, mw);
                return;
            }
            final String why = bindProblem(w, m, addr, len, rights, pair.qb);
            final int[] posted = new int[1];
            world.expectOutcome("ok", run(() -> posted[0] = pair.qb.sim.bindMw(w.sim, wrId,
                EnumSet.of(SendFlag.SIGNALED),
                info)));
            final int newKey = SendWr.incRkey(w.shownKey);
            world.expectEqual(Mismatch.Kind.KEY, newKey, posted[0], "ibv_bind_mw's new rkey (ibv_inc_rkey at post)");
            w.shownKey = newKey;
            world.connections.poll(world.cqB, world.cqName, why == null ? "SUCCESS" : "MW_BIND_ERR");
            if (why == null)
            {
                bound(w, m, addr, len, rights, newKey, null);
            }
            else
            {
                pair.broken = true;
                world.line("# refused: " + why);
            }
        }
        else
        {
            final int newKey = SendWr.incRkey(w.shownKey);
            final String why = !w.live ? "the window is deallocated" : bindProblem(w, m, addr, len, rights, pair.qb);
            world.expectOutcome("ok", run(() -> pair.qb.sim.postSend(List.of(new SendWr(wrId, WrOpcode.BIND_MW,
                List.of(),
                EnumSet.of(SendFlag.SIGNALED), 0, 0, 0, 0, 0, 0, new SendWr.Bind(w.sim, newKey, info))))));
            world.connections.poll(world.cqB, world.cqName, why == null ? "SUCCESS" : "MW_BIND_ERR");
            if (why == null)
            {
                bound(w, m, addr, len, rights, newKey, pair.qb);
            }
            else
            {
                pair.broken = true;
                world.line("# refused: " + why);
            }
        }
        issueKeyOfWindow(keyN, mw);
    }

    private void issueKeyOfWindow(final int keyN, final String mw)
    {
        final MwM w = world.mws.get(mw);
        if (w == null)
        {
            world.issueKey(keyN, mw, null, 0, 0, 0, false);
            return;
        }
        world.issueKey(keyN, mw, "rkey", w.shownKey, w.bound ? w.lo : 0, w.bound ? w.len : 0, false);
    }

    /** Why the device refuses the bind (rxe_check_bind_mw's order, LocalOps), or null. */
    private static String bindProblem(final MwM w, final MrM m, final long addr, final long len,
        final Set<Access> rights, final Qp qp)
    {
        if (w.type == MwType.TYPE_1 && w.shownKey != w.tableKey)
        {
            return "an earlier bind failed: ibv_bind_mw names the window by a key the device never issued";
        }
        if (w.type == MwType.TYPE_2 && w.bound)
        {
            return "type 2 window bound already";
        }
        if (w.type == MwType.TYPE_2 && qp.sim.pd() != w.pd.sim)
        {
            return "QP of another PD";
        }
        if (!m.live)
        {
            return "MR deregistered";
        }
        if (m.pd != w.pd)
        {
            return "MR of another PD";
        }
        if (!m.access.contains(Access.MW_BIND))
        {
            return "MR without MW_BIND";
        }
        if ((rights.contains(Access.REMOTE_WRITE) || rights.contains(Access.REMOTE_ATOMIC))
            && !m.access.contains(Access.LOCAL_WRITE))
        {
            return "writable window on an MR without LOCAL_WRITE";
        }
        if (addr < m.addr || len > m.lengthBytes - (addr - m.addr) || addr - m.addr >= m.lengthBytes)
        {
            return "range outside the MR";
        }
        return null;
    }

    void bound(final MwM w, final MrM m, final long addr, final long len, final Set<Access> rights,
        final int newKey, final Qp qp)
    {
        if (w.bound)
        {
            w.mr.windows--;
        }
        world.mpt.rewritten(w.tableKey, newKey);
        w.tableKey = newKey;
        w.shownKey = newKey;
        w.bound = true;
        w.mr = m;
        w.lo = addr;
        w.len = len;
        w.rights(rights);
        w.qp = qp;
        m.windows++;
    }

    void unbind(final String mw, final int pdIndex, final int keyN)
    {
        final Script.Line line = () -> "unbind " + mw + " qb" + pdIndex;
        if (!(world.bound.contains(mw) && world.pdBound(pdIndex)) && world.skipUnbound(line, mw, "pd_b" + pdIndex))
        {
            issueKeyOfWindow(keyN, mw);
            return;
        }
        final PdM pd = postingPd(line, pdIndex, keyN, mw, "unbind");
        if (pd == null)
        {
            return;
        }
        final MwM w = world.mws.get(mw);
        final Pair pair = pd.pair;
        final long wrId = world.nextWrId++;
        if (!w.live || w.type == MwType.TYPE_2)
        {
            world.expectLine("EINVAL");
            world.expectOutcome("EINVAL", run(() -> pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
                MwBindInfo.unbind())));
            issueKeyOfWindow(keyN, mw);
            return;
        }
        final boolean desync = w.shownKey != w.tableKey;
        final int[] posted = new int[1];
        world.expectOutcome("ok", run(() -> posted[0] = pair.qb.sim.bindMw(w.sim, wrId, EnumSet.of(SendFlag.SIGNALED),
            MwBindInfo.unbind())));
        final int newKey = SendWr.incRkey(w.shownKey);
        world.expectEqual(Mismatch.Kind.KEY, newKey, posted[0], "ibv_bind_mw's new rkey (ibv_inc_rkey at post)");
        w.shownKey = newKey;
        world.connections.poll(world.cqB, world.cqName, desync ? "MW_BIND_ERR" : "SUCCESS");
        if (desync)
        {
            pair.broken = true;
        }
        else
        {
            if (w.bound)
            {
                w.mr.windows--;
            }
            world.mpt.rewritten(w.tableKey, newKey);
            w.tableKey = newKey;
            w.bound = false;
            w.mr = null;
            w.lo = 0;
            w.len = 0;
            w.rights(Set.of());
            w.qp = null;
        }
        issueKeyOfWindow(keyN, mw);
    }

    void localInv(final int pdIndex, final int keyN)
    {
        final Script.Line line = () -> "post local_inv qb" + pdIndex + " rkey=k" + keyN;
        if (!(world.pdBound(pdIndex) && world.keyBound(keyN)) && world.skipUnbound(line, "pd_b" + pdIndex, "k" + keyN))
        {
            return;
        }
        final PdM pd = world.pds.get(pdIndex);
        if (!pd.live)
        {
            world.skipStep(line, "pd_b" + pdIndex + " is closed");
            return;
        }
        world.begin(line);
        if (!world.connections.ensurePair(pd))
        {
            world.step.lines.add("# not posted: no QP");
            return;
        }
        final Pair pair = pd.pair;
        final int key = world.keys.get(keyN).value;
        final KeyName k = world.keys.get(keyN);
        final Object holder = world.holderOf(key);
        world.line(() -> line.text() + "   # " + k.name + " = " + Script.key(key) + ": "
            + RemoteAccess.describeKey(k, holder));
        final MwM w = holder instanceof MwM x ? x : null;
        final boolean ok = w != null && w.type == MwType.TYPE_2 && (!w.bound || w.qp == pair.qb);
        final long wrId = world.nextWrId++;
        world.expectOutcome("ok", run(() -> pair.qb.sim.postSend(List.of(new SendWr(wrId, WrOpcode.LOCAL_INV, List.of(),
            EnumSet.of(SendFlag.SIGNALED), 0, 0, 0, 0, 0, key)))));
        world.connections.poll(world.cqB, world.cqName, ok ? "SUCCESS" : "LOC_QP_OP_ERR");
        if (!ok)
        {
            pair.broken = true;
            return;
        }
        if (w.bound)
        {
            w.mr.windows--;
        }
        w.bound = false;
        w.mr = null;
        w.lo = 0;
        w.len = 0;
        w.rights(Set.of());
        w.qp = null;
    }

    /**
     * The PD whose QP pair posts a window's bind or unbind: the step begun and its line written; null, with the
     * window's key issued all the same, when the PD is closed (the step skipped) or has no QP pair (not posted).
     */
    private PdM postingPd(final Script.Line line, final int pdIndex, final int keyN, final String mw, final String verb)
    {
        final PdM pd = world.pds.get(pdIndex);
        if (!pd.live)
        {
            world.skipStep(line, "pd_b" + pdIndex + " is closed");
            issueKeyOfWindow(keyN, mw);
            return null;
        }
        world.begin(line);
        if (!world.connections.ensurePair(pd))
        {
            world.step.lines.add("# the " + verb + " is not posted: no QP");
            issueKeyOfWindow(keyN, mw);
            return null;
        }
        world.line(line);
        return pd;
    }
}
