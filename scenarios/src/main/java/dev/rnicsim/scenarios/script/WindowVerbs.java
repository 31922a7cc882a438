package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimFastRegMr;
import dev.rnicsim.simnic.SimMw;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.WrOpcode;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Script verbs of the keys a QP's own device changes: memory windows ({@code mw}, {@code bind}, {@code unbind}),
 * fast-registration MRs ({@code fastmr}, {@code map}) and the local work requests {@code post local_inv} and
 * {@code post reg_mr}. Each says whether the device ran the request, flushed it or left it queued. Stateless.
 */
final class WindowVerbs
{
    private WindowVerbs()
    {
    }

    /** {@code mw NAME PD [type=1|2]}: ibv_alloc_mw, an unbound window. */
    static Outcome mw(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final String given = l.options().getOrDefault("type", "1");
        if (!given.matches("-?[0-9]{1,9}"))
        {
            throw l.error("type=" + given + ": the window type is a number (1 or 2)");
        }
        final SimMw mw = (SimMw)pd.allocMw(Integer.parseInt(given));
        final MwType type = mw.type();
        s.names.put(l.args().get(0), mw);
        return Outcome.ok(String.format(Locale.ROOT, "type %d, rkey=0x%08x (index %d, variant %d), unbound: it "
            + "grants nothing until a bind", type.code(), mw.rkey(), MrFields.keyIndex(pd, mw.rkey()),
            MrFields.keyVariant(pd, mw.rkey())));
    }

    /**
     * {@code bind MW QP MR [addr=] [length=] [access=] [rkey=] [id=]}: ibv_bind_mw (type 1) or a posted BIND_MW (type
     * 2).
     */
    static Outcome bindMw(final Session s, final ScriptLine l)
    {
        final SimMw mw = s.get(l, l.args().get(0), SimMw.class);
        final SimQp qp = s.get(l, l.args().get(1), SimQp.class);
        final MemoryRegion mr = s.get(l, l.args().get(2), MemoryRegion.class);
        final Map<String, String> o = l.options();
        final long addr = o.containsKey("addr") ? s.eval(l, o.get("addr")).num() : mr.iova();
        final long len = o.containsKey("length") ? s.evalNum(l, o.get("length")) : mr.lengthBytes();
        final Set<Access> access = Spec.accessFlags(o.getOrDefault("access", "remote_read,remote_write"));
        final long id = o.containsKey("id") ? s.evalNum(l, o.get("id")) : s.nextWrId++;
        final MwBindInfo info = new MwBindInfo(mr, addr, len, access);
        final int before = mw.rkey();
        final boolean wasErr = qp.state() == QpState.ERR;
        final String range = String.format(Locale.ROOT, "0x%x+%s of MR lkey 0x%08x, rights %s", addr,
            Units.bytes(len), mr.lkey(), access);
        if (mw.type() == MwType.TYPE_1)
        {
            if (o.containsKey("rkey"))
            {
                throw l.error("'" + l.args().get(0) + "' is a type 1 window: ibv_bind_mw picks its new rkey"
                    + " (ibv_inc_rkey), so rkey= is only for type 2 windows");
            }
            final int now = qp.bindMw(mw, id, PostVerbs.sendFlags(l), info);
            Engines.settle(s);
            return Outcome.ok(String.format(Locale.ROOT, "ibv_bind_mw wr_id=%s (type 1): rkey 0x%08x -> 0x%08x "
                + "(set at post), %s%s", Long.toUnsignedString(id), before, now, range, deviceNote(s, qp, wasErr) + keptKey(qp, wasErr,
                before)));
        }
        final int key = o.containsKey("rkey") ? s.evalInt(l, o.get("rkey")) : SendWr.incRkey(before);
        qp.postSend(SendWr.bindMw(id, mw, key, info).withFlags(PostVerbs.sendFlags(l)));
        Engines.settle(s);
        final String note = deviceNote(s, qp, wasErr);
        return Outcome.ok(String.format(Locale.ROOT, "posted BIND_MW wr_id=%s (type 2, key byte 0x%02x), %s, "
            + "through QP 0x%x only%s", Long.toUnsignedString(id), key & 0xff, range, qp.qpNum(), note.isEmpty() ? String.format(
            Locale.ROOT, ": rkey 0x%08x -> 0x%08x", before, mw.rkey()) : note + String.format(Locale.ROOT,
            "; the rkey stays 0x%08x", mw.rkey())));
    }

    /** {@code unbind MW QP [id=]}: ibv_bind_mw of a type 1 window with no MR. */
    static Outcome unbindMw(final Session s, final ScriptLine l)
    {
        final SimMw mw = s.get(l, l.args().get(0), SimMw.class);
        final SimQp qp = s.get(l, l.args().get(1), SimQp.class);
        final long id = l.options().containsKey("id") ? s.evalNum(l, l.options().get("id")) : s.nextWrId++;
        final int before = mw.rkey();
        final boolean wasErr = qp.state() == QpState.ERR;
        final int now = qp.bindMw(mw, id, PostVerbs.sendFlags(l), MwBindInfo.unbind());
        Engines.settle(s);
        final String note = deviceNote(s, qp, wasErr);
        return Outcome.ok(String.format(Locale.ROOT, "ibv_bind_mw wr_id=%s (unbind): rkey 0x%08x -> 0x%08x (set at "
            + "post)%s", Long.toUnsignedString(id), before, now, note.isEmpty() ? "; the window grants nothing"
            : note + keptKey(qp, wasErr, before)));
    }

    /**
     * A type 1 bind the device did not execute: ibv_bind_mw changed the window's rkey at post time, but the window
     * keeps its old binding under the old key (restoring mw->rkey is the application's job).
     */
    private static String keptKey(final SimQp qp, final boolean wasErr, final int keyBefore)
    {
        if (wasErr || qp.sendsWaiting() == 0 && qp.lastLocalFailure() != null)
        {
            return String.format(Locale.ROOT, "; the window keeps its previous state under rkey 0x%08x, while its "
                + "rkey field shows the new one, which the device never issued", keyBefore);
        }
        return "";
    }

    /**
     * What became of a local work request (BIND_MW, LOCAL_INV, REG_MR) just posted: the simulated device executes
     * it at once unless the QP is in ERR (flushed) or waits behind a send without a receive; on a manual engine it
     * stays queued until the engine moves.
     */
    private static String deviceNote(final Session s, final SimQp qp, final boolean wasErr)
    {
        if (wasErr)
        {
            return "; the QP is in ERR: flushed (poll shows IBV_WC_WR_FLUSH_ERR)";
        }
        if (s.manualEngine && qp.sendsWaiting() > 0)
        {
            return String.format(Locale.ROOT, "; queued (engine manual): it runs on progress or poll, %d WQE%s on "
                + "the send queue", qp.sendsWaiting(), qp.sendsWaiting() == 1 ? "" : "s");
        }
        if (qp.sendsWaiting() > 0)
        {
            return qp.waitsForAckForever() ? "; waiting: " + Engines.whyWaiting(qp)
                : "; waiting behind a send the peer has no receive for (RNR)";
        }
        if (qp.lastLocalFailure() != null)
        {
            return String.format(Locale.ROOT, "; the device refused it: %s (poll shows the completion; the QP is in "
                + "%s)", qp.lastLocalFailure(), qp.state());
        }
        return "";
    }

    /** {@code fastmr NAME PD PAGES}: ib_alloc_mr, a fast-registration MR, INVALID until a REG_MR. */
    static Outcome fastMr(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final SimFastRegMr mr = (SimFastRegMr)pd.allocMr(s.evalCount(l, l.args().get(2)));
        s.names.put(l.args().get(0), mr);
        return Outcome.ok(String.format(Locale.ROOT, "key=0x%08x (index %d, variant %d), MTT room for %d pages; "
            + "INVALID until a REG_MR completes", mr.lkey(), MrFields.keyIndex(pd, mr.lkey()),
            MrFields.keyVariant(pd, mr.lkey()), mr.maxNumSg()));
    }

    /** {@code map FASTMR ADDR SIZE}: ib_map_mr_sg, the pages the next REG_MR maps. */
    static Outcome mapFastMr(final Session s, final ScriptLine l)
    {
        final SimFastRegMr mr = s.get(l, l.args().get(0), SimFastRegMr.class);
        final Session.Val a = s.eval(l, l.args().get(1));
        final long len = s.evalNum(l, l.args().get(2));
        final int pages = mr.mapSg(a.num(), len);
        return Outcome.ok(String.format(Locale.ROOT, "%d pages of 4 KiB mapped and pinned at 0x%x (%s, iova 0x%x); "
            + "a REG_MR makes them valid under a new key", pages, a.num(), Units.bytes(len), mr.iova()));
    }

    /** post local_inv and post reg_mr: work requests the QP's own device executes. */
    static Outcome postLocal(final Session s, final ScriptLine l, final SimQp qp, final WrOpcode op, final long id,
        final Set<SendFlag> flags, final int rkey)
    {
        final boolean wasErr = qp.state() == QpState.ERR;
        if (op == WrOpcode.LOCAL_INV)
        {
            final SendWr inv = SendWr.localInv(id, rkey).withFlags(flags);
            qp.postSend(inv);
            if (s.manualEngine)
            {
                return Outcome.ok(Engines.queued(qp, inv));
            }
            Engines.settle(s);
            return Outcome.ok(String.format(Locale.ROOT, "posted wr_id=%s (LOCAL_INV of rkey 0x%08x)%s", Long.toUnsignedString(id), rkey,
                deviceNote(s, qp, wasErr)));
        }
        final Map<String, String> o = l.options();
        final SimFastRegMr mr = s.get(l, o.get("mr"), SimFastRegMr.class);
        final int before = mr.lkey();
        final int key = o.containsKey("key") ? s.evalInt(l, o.get("key")) : SendWr.incRkey(before);
        final Set<Access> access = Spec.accessFlags(o.getOrDefault("access", "local_write"));
        qp.postSend(SendWr.regMr(id, mr, key, access).withFlags(flags));
        Engines.settle(s);
        return Outcome.ok(String.format(Locale.ROOT, "posted wr_id=%s (REG_MR of %s at 0x%x, key 0x%08x -> "
            + "0x%08x, access %s)%s", Long.toUnsignedString(id), Units.bytes(mr.lengthBytes()), mr.iova(), before, key, access,
            deviceNote(s, qp, wasErr)));
    }
}
