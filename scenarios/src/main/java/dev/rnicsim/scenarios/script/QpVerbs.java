package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.QpTransitions;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.simnic.SimSrq;
import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.SharedReceiveQueue;
import dev.rnicsim.verbs.SrqAttr;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Script verbs of the QP state machine and the QP types beyond RC: {@code modify} (ibv_modify_qp, one transition with
 * its attribute mask), {@code queryqp}, {@code srq}, {@code srqlimit} and {@code ah}. Stateless.
 */
final class QpVerbs
{
    private QpVerbs()
    {
    }

    /**
     * {@code modify QP STATE [attributes] [mask=ATTRS]}: the mask holds STATE (unless STATE is {@code same}) and one bit
     * per attribute option given ({@code dest=QP} gives AV and DEST_QPN, {@code av=QP} AV alone), or exactly the
     * attributes of {@code mask=} (the state word still sets STATE).
     */
    static Outcome modify(final Session s, final ScriptLine l)
    {
        final SimQp qp = s.get(l, l.args().get(0), SimQp.class);
        final Map<String, String> o = l.options();
        final String word = l.args().get(1);
        final QpAttr.Builder b = QpAttr.builder();
        if (!word.equals("same"))
        {
            b.state(state(word));
        }
        if (o.containsKey("cur"))
        {
            b.curState(state(o.get("cur")));
        }
        if (o.containsKey("access"))
        {
            b.accessFlags(Spec.accessFlags(o.get("access")));
        }
        final SimQp dest = o.containsKey("dest") ? s.get(l, o.get("dest"), SimQp.class)
            : o.containsKey("av") ? s.get(l, o.get("av"), SimQp.class) : null;
        if (o.containsKey("sgid_index") && dest == null)
        {
            throw l.error("sgid_index= is the address vector's source GID (ah_attr.grh.sgid_index): give it with "
                + "dest=QP or av=QP, which set the address vector");
        }
        if (l.flags().contains("lid_only") && (dest == null || o.containsKey("sgid_index")))
        {
            throw l.error("lid_only is an address vector without a GRH (is_global=0, a LID only): give it with "
                + "dest=QP or av=QP and without sgid_index=, which is the GRH's");
        }
        if (dest != null)
        {
            // the source GID: sgid_index= (checked by ibv_modify_qp: EINVAL past gid_tbl_len, ENODATA for an empty
            // entry), else entry 0 as a zeroed ibv_qp_attr leaves it; lid_only: no GRH (is_global=0), LID 1 as
            // `ah ... lid_only` gives (rdma_check_ah_attr refuses it on RoCE)
            b.av(l.flags().contains("lid_only") ? new AhAttr(null, 1, 1, 0)
                : o.containsKey("sgid_index")
                ? new AhAttr(dest.address().gid(), 0, 1, s.evalInt(l, o.get("sgid_index")))
                : AhAttr.toGid(dest.address().gid()));
            if (o.containsKey("dest"))
            {
                b.destQpNum(dest.qpNum());
            }
        }
        if (o.containsKey("path_mtu"))
        {
            final long bytes = s.evalNum(l, o.get("path_mtu"));
            b.pathMtu(bytes >= 256 && bytes <= 4096 && Long.bitCount(bytes) == 1
                ? Long.numberOfTrailingZeros(bytes) - 7 : (int)bytes);
        }
        intOpt(s, l, "port", b::port);
        intOpt(s, l, "pkey_index", b::pkeyIndex);
        intOpt(s, l, "qkey", b::qkey);
        intOpt(s, l, "dest_qpn", b::destQpNum);
        intOpt(s, l, "rq_psn", b::rqPsn);
        intOpt(s, l, "sq_psn", b::sqPsn);
        intOpt(s, l, "timeout", b::timeout);
        intOpt(s, l, "retry", b::retryCnt);
        intOpt(s, l, "rnr_retry", b::rnrRetry);
        intOpt(s, l, "min_rnr_timer", b::minRnrTimer);
        intOpt(s, l, "max_rd_atomic", b::maxRdAtomic);
        intOpt(s, l, "max_dest_rd_atomic", b::maxDestRdAtomic);
        Set<QpAttrMask> mask = b.mask();
        if (o.containsKey("mask"))
        {
            mask = EnumSet.noneOf(QpAttrMask.class);
            if (!word.equals("same"))
            {
                mask.add(QpAttrMask.STATE);
            }
            for (final String w : o.get("mask").split(","))
            {
                if (!w.isBlank() && !w.equals("none"))
                {
                    mask.add(QpAttrMask.valueOf(w.trim().toUpperCase(Locale.ROOT)));
                }
            }
        }
        final QpState before = qp.state();
        final int receivesBefore = qp.receivesPosted();
        final int sendsBefore = qp.sendsWaiting();
        qp.modify(b.build(), mask);
        Engines.settle(s);
        return Outcome.ok(String.format(Locale.ROOT, "ibv_modify_qp %s -> %s (attr_mask %s = 0x%x)", before,
            qp.state(), QpTransitions.names(mask), QpAttrMask.toBits(mask))
            + droppedByReset(before, qp.state(), receivesBefore, sendsBefore)
            + (dest != null && !o.containsKey("sgid_index") ? sourceGidZero(qp) : ""));
    }

    /**
     * The source GID of an address vector given without {@code sgid_index=}: entry 0, as a zeroed {@code struct
     * ibv_qp_attr} gives it and as the kernel takes it (no check beyond the entry's existence). On a port whose entry 0
     * is RoCE v1 the connection manager would take another (RoCE v2: cma.c {@code default_gid_type}), and a port of
     * RoCE v2 only drops the v1 packets: said so that the choice is seen.
     */
    private static String sourceGidZero(final SimQp qp)
    {
        final dev.rnicsim.simnic.SimDevice device = qp.simDevice();
        final java.util.List<dev.rnicsim.verbs.GidEntry> table = dev.rnicsim.simnic.GidTable.entries(device, 1);
        final int cm = dev.rnicsim.simnic.GidTable.connectionManagerSgidIndex(device, 1);
        if (table.isEmpty() || cm == 0 || table.getFirst().gidType() != dev.rnicsim.verbs.GidType.ROCE_V1)
        {
            return "";
        }
        return "; the address vector leaves from GID entry 0 (RoCE v1), as a zeroed ibv_qp_attr's sgid_index does; "
            + "connect and the connection manager take entry " + cm + " (" + table.get(cm).gidType() + "), and a peer "
            + "port of RoCE v2 only drops RoCE v1 packets: give sgid_index=" + cm + " for that";
    }

    /**
     * What a transition to RESET threw away: the IBA (vol. 1, the Reset state of the QP state diagram) empties both
     * work queues without a completion, so receives posted before a reconnection are gone (Mooncake #1567: the
     * peer's SENDs then meet RNR NAKs without end).
     */
    private static String droppedByReset(final QpState before, final QpState after, final int receives,
        final int sends)
    {
        if (after != QpState.RESET || before == QpState.RESET || receives + sends == 0)
        {
            return "";
        }
        return "; RESET dropped " + receives + " posted receive(s) and " + sends + " send work request(s) without "
            + "completions (a QP in RESET has empty work queues): post the receives again once the QP is connected, "
            + "or the peer's SENDs meet RNR NAKs (for ever with rnr_retry=7)";
    }

    private static void intOpt(final Session s, final ScriptLine l, final String option,
        final java.util.function.IntConsumer set)
    {
        if (l.options().containsKey(option))
        {
            set.accept(s.evalInt(l, l.options().get(option)));
        }
    }

    private static QpState state(final String word)
    {
        return QpState.valueOf(word.toUpperCase(Locale.ROOT));
    }

    /** {@code queryqp QP}: ibv_query_qp. */
    static Outcome query(final Session s, final ScriptLine l)
    {
        final SimQp qp = s.get(l, l.args().get(0), SimQp.class);
        final QpAttr a = qp.query();
        return Outcome.ok(String.format(Locale.ROOT, "%s QP 0x%x: state %s, qp_access_flags %s, port %d, "
            + "pkey_index %d, qkey 0x%x, dest_qp_num 0x%x, path_mtu %d, rq_psn 0x%x, sq_psn 0x%x, timeout %d, "
            + "retry_cnt %d, rnr_retry %d, min_rnr_timer %d, max_rd_atomic %d, max_dest_rd_atomic %d%s%s",
            qp.type(), qp.qpNum(), a.qpState(), a.qpAccessFlags(), a.portNum(), a.pkeyIndex(), a.qkey(), a.destQpNum(),
            QpAttr.mtuBytes(a.pathMtu()), a.rqPsn(), a.sqPsn(), a.timeout(), a.retryCnt(), a.rnrRetry(),
            a.minRnrTimer(), a.maxRdAtomic(), a.maxDestRdAtomic(), a.sqDraining() ? ", send queue held (SQD)" : "",
            qp.srq() == null ? "" : ", receives from an SRQ"));
    }

    /**
     * {@code srq NAME PD [wr=N] [sge=N] [limit=N] [xrcd=XRCD cq=CQ]}: ibv_create_srq (defaults 64, 4, 0), or with
     * {@code xrcd=} and {@code cq=} ibv_create_srq_ex of type XRC.
     */
    static Outcome srq(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        final SrqAttr attr = new SrqAttr(s.evalInt(l, o.getOrDefault("wr", "64")),
            s.evalInt(l, o.getOrDefault("sge", "4")), s.evalInt(l, o.getOrDefault("limit", "0")));
        final SharedReceiveQueue srq = XrcVerbs.isXrcSrq(l) ? XrcVerbs.xrcSrq(s, l, attr)
            : s.get(l, l.args().get(1), SimPd.class).createSrq(attr);
        s.names.put(l.args().get(0), srq);
        final SrqAttr a = srq.query();
        return Outcome.ok((srq.xrcd() == null ? "ibv_create_srq" : "ibv_create_srq_ex (XRC, srq_num 0x"
            + Integer.toHexString(srq.srqNum()) + ")") + ": max_wr " + a.maxWr() + ", max_sge " + a.maxSge()
            + ", srq_limit " + a.srqLimit());
    }

    /** {@code srqlimit SRQ N}: ibv_modify_srq with IBV_SRQ_LIMIT. */
    static Outcome srqLimit(final Session s, final ScriptLine l)
    {
        final SimSrq srq = s.get(l, l.args().get(0), SimSrq.class);
        srq.modifyLimit(s.evalInt(l, l.args().get(1)));
        return Outcome.ok("srq_limit " + srq.query().srqLimit());
    }

    /**
     * {@code ah NAME PD DEVICE [port=N] [sgid_index=N] [dgid_index=N] [lid_only]}: ibv_create_ah to DEVICE's port GID:
     * {@code ah_attr.grh.dgid} is entry 0 of DEVICE's port 1 GID table, or entry {@code dgid_index=} (an address of
     * another kind: the IPv4-mapped GID of its netdev's address), and {@code ah_attr.grh.sgid_index} the source entry
     * ({@code sgid_index=}, default 0 as in a zeroed {@code struct ibv_ah_attr}).
     */
    static Outcome ah(final Session s, final ScriptLine l)
    {
        final SimDevice to = s.get(l, l.args().get(2), SimDevice.class);
        final Map<String, String> o = l.options();
        if (o.containsKey("dgid_index") && l.flags().contains("lid_only"))
        {
            throw l.error("dgid_index= picks the GRH's destination GID (ah_attr.grh.dgid), and lid_only leaves the GRH "
                + "out: give one of them");
        }
        final String dgid = o.containsKey("dgid_index") ? destinationGid(s, l, to, s.evalInt(l, o.get("dgid_index")))
            : to.gid();
        final AhAttr attr = new AhAttr(l.flags().contains("lid_only") ? null : dgid,
            l.flags().contains("lid_only") ? 1 : 0, s.evalInt(l, o.getOrDefault("port", "1")),
            s.evalInt(l, o.getOrDefault("sgid_index", "0")));
        final AddressHandle ah = s.get(l, l.args().get(1), SimPd.class).createAh(attr);
        s.names.put(l.args().get(0), ah);
        return Outcome.ok("ibv_create_ah: " + (attr.isGlobal() ? "GID " + attr.dgid() : "LID " + attr.dlid())
            + " through port " + attr.portNum());
    }

    /**
     * @return the GID of entry {@code index} of DEVICE's port 1 GID table, as {@code ibv_query_gid} gives it.
     * @throws ScriptException naming the table's valid entries for an index outside them.
     */
    private static String destinationGid(final Session s, final ScriptLine l, final SimDevice to, final int index)
    {
        final java.util.List<dev.rnicsim.verbs.GidEntry> table = dev.rnicsim.simnic.GidTable.entries(to, 1);
        if (index < 0 || index >= table.size())
        {
            throw l.error("dgid_index=" + index + ": port 1 of " + l.args().get(2) + " has " + table.size()
                + " valid GID entries (0 to " + (table.size() - 1) + "); give one of them, as ibv_query_gid_ex "
                + "answers them");
        }
        return dev.rnicsim.simnic.GidTable.text(table.get(index).gid());
    }
}
