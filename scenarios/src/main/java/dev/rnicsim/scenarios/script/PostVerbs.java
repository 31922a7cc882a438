package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimCq;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.simnic.SimQp;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.RecvWr;
import dev.rnicsim.verbs.SendFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.WorkCompletion;
import dev.rnicsim.verbs.WrOpcode;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Script verbs of the data path: {@code qp} (ibv_create_qp), {@code connect} (both QPs to RTS), {@code post}
 * (ibv_post_send with its scatter-gather list), {@code recv} (ibv_post_recv, ibv_post_srq_recv) and {@code poll}
 * (ibv_poll_cq, with the reason of each error completion). Stateless.
 */
final class PostVerbs
{
    /** An {@code rnr_retry} of 7 retries without limit (IBA 9.7.5.2.8; ibv_modify_qp(3)). */
    private static final int RNR_RETRY_FOREVER = 7;

    private PostVerbs()
    {
    }

    /** {@code qp NAME PD CQ [type=] [srq=] [send_wr=] [recv_wr=] [sge=] [inline=] [ops=]}: ibv_create_qp. */
    static Outcome qp(final Session s, final ScriptLine l)
    {
        final Map<String, String> o = l.options();
        if (XrcVerbs.isTargetQp(l))
        {
            return XrcVerbs.targetQp(s, l);
        }
        // Default 4 SGEs, or the device's max_sge where it is lower (EFA: 2).
        final int sge = o.containsKey("sge") ? s.evalCount(l, o.get("sge")) : Math.min(4,
            s.get(l, l.args().get(1), SimPd.class).context().device().profile().attributes().maxSge());
        // Default 64 inline bytes, or the driver's bound where it is lower (EFA: its inline_buf_size, 32).
        final int inline = o.containsKey("inline") ? s.evalCount(l, o.get("inline")) : Math.min(64,
            s.get(l, l.args().get(1), SimPd.class).context().device().profile().traits().inlineLimit().maxBytes());
        final QpCap cap = new QpCap(s.evalCount(l, o.getOrDefault("send_wr", "64")),
            s.evalCount(l, o.getOrDefault("recv_wr", "64")), sge, sge, inline);
        final SimCq cq = s.get(l, XrcVerbs.cqArg(l), SimCq.class);
        final QpType type = QpType.valueOf(o.getOrDefault("type", "rc").toUpperCase(Locale.ROOT));
        final dev.rnicsim.simnic.SimSrq srq = o.containsKey("srq")
            ? s.get(l, o.get("srq"), dev.rnicsim.simnic.SimSrq.class) : null;
        final Set<WrOpcode> sendOps = o.containsKey("ops") ? Spec.sendOps(o.get("ops")) : null;
        final QpInitAttr init = type == QpType.XRC_SEND ? XrcVerbs.sendAttr(cq, cap)
            : new QpInitAttr(cq, cq, type, cap, false, srq);
        final SimQp qp = (SimQp)s.get(l, l.args().get(1), SimPd.class).createQp(init.withSendOps(sendOps));
        s.names.put(l.args().get(0), qp);
        return Outcome.ok(type + " QP 0x" + Integer.toHexString(qp.qpNum()) + " in " + qp.state()
            + (srq == null ? "" : ", receives from the SRQ"));
    }

    /**
     * {@code connect QP QP [access=] [rnr_retry=] [min_rnr_timer=] [retry=] [sgid_index=] [peer_sgid_index=]}: both
     * QPs to RTS. Each QP's address vector leaves from the source GID the connection manager picks (RoCE v2 where the
     * port has it: kernel cma.c {@code cma_add_one}'s {@code default_gid_type}, {@code GidTable
     * .connectionManagerSgidIndex}), or from {@code sgid_index=} (the first QP's own GID table) and
     * {@code peer_sgid_index=} (the second's), checked as {@code ibv_modify_qp} checks an address vector's
     * {@code sgid_index} (EINVAL past gid_tbl_len, ENODATA for an empty entry). The six transitions are checked before
     * the first is made ({@link dev.rnicsim.simnic.ConnectChecks}): a refused connect leaves both QPs as they were.
     */
    static Outcome connect(final Session s, final ScriptLine l)
    {
        final SimQp a = s.get(l, l.args().get(0), SimQp.class);
        final SimQp b = s.get(l, l.args().get(1), SimQp.class);
        // by default what the QP type's peers can do: the InfiniBand UC service carries SEND and RDMA WRITE only (no
        // RDMA READ, no atomic), so a UC QP's default is REMOTE_WRITE, the most ibv_uc_pingpong and perftest give UC
        // QPs; the kernel does not refuse the other bits (ib_modify_qp_is_ok checks the mask, not the flags' values)
        final boolean uc = a.type() == dev.rnicsim.verbs.QpType.UC;
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access",
            uc ? "remote_write" : "remote_write,remote_read,remote_atomic"));
        final int rnrRetry = l.options().containsKey("rnr_retry") ? s.evalCount(l, l.options().get("rnr_retry"))
            : RNR_RETRY_FOREVER;
        final int timer = s.evalCount(l, l.options().getOrDefault("min_rnr_timer", "12"));
        final int retry = s.evalCount(l, l.options().getOrDefault("retry", "7"));
        final int sgidA = l.options().containsKey("sgid_index") ? s.evalInt(l, l.options().get("sgid_index")) : -1;
        final int sgidB = l.options().containsKey("peer_sgid_index")
            ? s.evalInt(l, l.options().get("peer_sgid_index")) : -1;
        if (a == b && sgidB >= 0)
        {
            throw l.error("peer_sgid_index= names the second QP's source GID, and " + l.args().get(0)
                + " connects to itself: give its source GID with sgid_index= alone");
        }
        // every transition of both QPs is checked before either moves, so a refused connect changes nothing (a
        // refused ibv_modify_qp leaves its QP as it was)
        for (final SimQp[] pair : a == b ? new SimQp[][] {{a, a}} : new SimQp[][] {{a, b}, {b, a}})
        {
            dev.rnicsim.simnic.ConnectChecks.check(pair[0], pair[1].address(), access, timer,
                pair[0] == a ? sgidA : sgidB, retry, rnrRetry);
        }
        for (final SimQp[] pair : a == b ? new SimQp[][] {{a, a}} : new SimQp[][] {{a, b}, {b, a}})
        {
            pair[0].modifyToInit(access);
            // -1: the connection manager's source GID, as modifyToRtr gives it
            dev.rnicsim.simnic.ProgramRtr.modifyToRtr(pair[0], pair[1].address(), timer, 0,
                pair[0] == a ? sgidA : sgidB);
            pair[0].modifyToRts(retry, rnrRetry);
        }
        // what the driver kept (mlx5 masks the fields to their widths, rxe keeps them whole; the NAK carries the
        // timer's low 5 bits)
        final dev.rnicsim.verbs.QpAttr kept = a.query();
        return Outcome.ok("RTS both ways, qp_access_flags " + access + ", rnr_retry " + kept.rnrRetry()
            + (kept.rnrRetry() == RNR_RETRY_FOREVER ? " (no limit)" : "") + ", min_rnr_timer " + kept.minRnrTimer()
            + " (" + Units.duration(dev.rnicsim.simnic.CostModel.rnrTimerNs(kept.minRnrTimer() & 0x1f))
            + " a wait)");
    }

    /** @return the send flags of a line: SIGNALED unless {@code unsignaled}, INLINE, FENCE. */
    static Set<SendFlag> sendFlags(final ScriptLine l)
    {
        final Set<SendFlag> flags = EnumSet.noneOf(SendFlag.class);
        if (!l.flags().contains("unsignaled"))
        {
            flags.add(SendFlag.SIGNALED);
        }
        if (l.flags().contains("inline"))
        {
            flags.add(SendFlag.INLINE);
        }
        if (l.flags().contains("fence"))
        {
            // IBV_SEND_FENCE: the WQE starts only after every earlier READ and atomic of the QP completed.
            flags.add(SendFlag.FENCE);
        }
        return flags;
    }

    /** {@code post OP QP [sgl=] [remote=] [rkey=] ...}: ibv_post_send of one work request. */
    static Outcome post(final Session s, final ScriptLine l)
    {
        final SimQp qp = s.get(l, l.args().get(1), SimQp.class);
        final Map<String, String> o = l.options();
        final List<Sge> sgl = sgl(s, l, o.get("sgl"));
        final long id = o.containsKey("id") ? s.evalNum(l, o.get("id")) : s.nextWrId++;
        final WrOpcode op = switch (l.args().get(0))
        {
            case "write" -> WrOpcode.RDMA_WRITE;
            case "write_imm" -> WrOpcode.RDMA_WRITE_WITH_IMM;
            case "read" -> WrOpcode.RDMA_READ;
            case "send" -> WrOpcode.SEND;
            case "send_imm" -> WrOpcode.SEND_WITH_IMM;
            case "cas" -> WrOpcode.ATOMIC_CMP_AND_SWP;
            case "send_inv" -> WrOpcode.SEND_WITH_INV;
            case "local_inv" -> WrOpcode.LOCAL_INV;
            case "reg_mr" -> WrOpcode.REG_MR;
            case "flush" -> WrOpcode.FLUSH;
            case "atomic_write" -> WrOpcode.ATOMIC_WRITE;
            default -> WrOpcode.ATOMIC_FETCH_AND_ADD;
        };
        long remote = 0;
        int rkey = 0;
        if (o.containsKey("remote"))
        {
            final Session.Val r = s.eval(l, o.get("remote"));
            remote = r.num();
            rkey = r.rkey();
        }
        if (o.containsKey("rkey"))
        {
            rkey = s.evalInt(l, o.get("rkey"));
        }
        if (op.isRdma() && !o.containsKey("remote"))
        {
            throw l.error("post " + l.args().get(0) + " needs remote=ADDR (and rkey=KEY unless ADDR starts at an MR)");
        }
        final Set<SendFlag> flags = sendFlags(l);
        final long compareAdd = op == WrOpcode.ATOMIC_FETCH_AND_ADD
            ? s.evalNum(l, o.getOrDefault("add", "1")) : s.evalNum(l, o.getOrDefault("compare", "0"));
        if (op == WrOpcode.LOCAL_INV || op == WrOpcode.REG_MR)
        {
            return WindowVerbs.postLocal(s, l, qp, op, id, flags, rkey);
        }
        final boolean inv = op == WrOpcode.SEND_WITH_INV;
        final SendWr wr = XrcVerbs.remoteSrqn(s, l, op == WrOpcode.FLUSH || op == WrOpcode.ATOMIC_WRITE
            ? ScriptPlacement.workRequest(s, l, op, id, sgl, flags, remote, rkey)
            : new SendWr(id, op, sgl, flags, inv ? 0 : remote, inv ? 0 : rkey,
            s.evalInt(l, o.getOrDefault("imm", "0")), compareAdd, s.evalNum(l, o.getOrDefault("swap", "0")),
            inv ? rkey : 0));
        if (o.containsKey("ah"))
        {
            qp.postSendUd(List.of(new dev.rnicsim.verbs.UdSendWr(wr, s.get(l, o.get("ah"),
                dev.rnicsim.simnic.SimAh.class), s.evalInt(l, o.getOrDefault("remote_qpn", "0")),
                s.evalInt(l, o.getOrDefault("qkey", "0")))));
        }
        else
        {
            qp.postSend(wr);
        }
        if (s.manualEngine)
        {
            return Outcome.ok(Engines.queued(qp, wr));
        }
        Engines.settle(s);
        return Outcome.ok("posted wr_id=" + Long.toUnsignedString(id) + " (" + ScriptPlacement.describe(wr)
            + (inv ? String.format(Locale.ROOT, ", invalidates rkey 0x%08x at the peer", rkey) : "") + ")"
            + (qp.sendsWaiting() > 0 ? "; waiting: " + Engines.whyWaiting(qp) : ""));
    }

    /** @return the SGEs of {@code sgl=}: ADDR:LEN[:LKEY], or a fragment or handle alone. */
    private static List<Sge> sgl(final Session s, final ScriptLine l, final String text)
    {
        final List<Sge> out = new ArrayList<>();
        if (text == null || text.isEmpty())
        {
            return out;
        }
        for (final String sge : text.split(","))
        {
            final String[] parts = sge.split(":");
            if (parts.length == 1)
            {
                out.add(wholeSge(s, l, sge));
                continue;
            }
            final Session.Val a = s.eval(l, parts[0]);
            final long len = s.evalNum(l, parts[1]);
            final int key;
            if (parts.length == 3)
            {
                key = s.evalInt(l, parts[2]);
            }
            else if (a.mr() != null)
            {
                key = a.mr().lkey();
            }
            else if (a.mw() != null)
            {
                throw l.error("SGE '" + sge + "': a memory window has no lkey (SGEs name local MRs); give "
                    + "ADDR:LEN:LKEY or start ADDR at an MR name");
            }
            else
            {
                throw l.error("SGE '" + sge + "': give the lkey (ADDR:LEN:LKEY) or start ADDR at an MR name");
            }
            try
            {
                out.add(new Sge(a.num(), sgeLength(len), key));
            }
            catch (final IllegalArgumentException e)
            {
                throw l.error("SGE '" + sge + "': " + e.getMessage());
            }
        }
        return out;
    }

    /**
     * A script's SGE length as C stores it in {@code struct ibv_sge}'s {@code uint32_t length}: modulo 2^32, so -1 is
     * 0xffffffff (4294967295 bytes, which the device then checks against the MR and fails at completion) and 4G is 0,
     * as an assignment in C converts it (C11 6.3.1.3); the step runs as the program's would, nothing aborts the
     * script.
     */
    static long sgeLength(final long len)
    {
        return len & 0xffff_ffffL;
    }

    /** An SGE over the whole of a fragment or of the range a handle was acquired for, with its lkey. */
    private static Sge wholeSge(final Session s, final ScriptLine l, final String name)
    {
        try
        {
            return switch (s.names.get(name))
            {
                case Session.FragmentBinding f -> f.fragment().sge();
                case Session.HandleBinding h -> new Sge(h.addr(), h.lengthBytes(), h.handle().lkey());
                case null, default -> throw l.error("SGE '" + name + "': only a fragment or a handle stands alone;"
                    + " give ADDR:LEN or ADDR:LEN:LKEY");
            };
        }
        catch (final IllegalArgumentException e)
        {
            throw l.error("SGE '" + name + "': " + e.getMessage());
        }
    }

    /** {@code recv QP|SRQ [sgl=] [id=]}: ibv_post_recv, or ibv_post_srq_recv. */
    static Outcome recv(final Session s, final ScriptLine l)
    {
        if (s.names.get(l.args().get(0)) instanceof dev.rnicsim.simnic.SimSrq srq)
        {
            final long id = l.options().containsKey("id") ? s.evalNum(l, l.options().get("id")) : s.nextWrId++;
            srq.postRecv(List.of(new RecvWr(id, sgl(s, l, l.options().get("sgl")))));
            Engines.settle(s);
            return Outcome.ok("ibv_post_srq_recv wr_id=" + Long.toUnsignedString(id) + " (" + srq.receivesPosted() + " waiting)");
        }
        final SimQp qp = s.get(l, l.args().get(0), SimQp.class);
        final long id = l.options().containsKey("id") ? s.evalNum(l, l.options().get("id")) : s.nextWrId++;
        qp.postRecv(new RecvWr(id, sgl(s, l, l.options().get("sgl"))));
        Engines.settle(s);
        return Outcome.ok("receive wr_id=" + Long.toUnsignedString(id) + " posted (" + qp.receivesPosted() + " waiting)");
    }

    /** {@code poll CQ [N]}: ibv_poll_cq, each completion with the reason of an error status. */
    static Outcome poll(final Session s, final ScriptLine l)
    {
        final SimCq cq = s.get(l, l.args().get(0), SimCq.class);
        final int n = l.args().size() > 1 ? s.evalCount(l, l.args().get(1)) : 16;
        s.lastCompletions = cq.poll(n);
        if (s.lastCompletions.isEmpty())
        {
            return Outcome.ok("no completion");
        }
        final StringBuilder sb = new StringBuilder();
        for (final WorkCompletion wc : s.lastCompletions)
        {
            if (sb.length() > 0)
            {
                sb.append('\n');
            }
            sb.append("wc wr_id=").append(Long.toUnsignedString(wc.wrId())).append(' ').append(wc.status().cName());
            if (wc.ok())
            {
                sb.append(" opcode=").append(wc.opcode()).append(" byte_len=").append(wc.byteLen());
                if (wc.withImm())
                {
                    sb.append(" imm=0x").append(Integer.toHexString(wc.immData()));
                }
                if (wc.withInv())
                {
                    sb.append(String.format(Locale.ROOT, " invalidated_rkey=0x%08x", wc.invalidatedRkey()));
                }
                if (wc.withGrh() || wc.srcQp() != 0)
                {
                    // A UD receive (ibv_poll_cq(3)): the sender's QP and whether a GRH leads the buffer.
                    sb.append(String.format(Locale.ROOT, " src_qp=0x%x%s", wc.srcQp(), wc.withGrh() ? " grh" : ""));
                }
            }
            else
            {
                sb.append(String.format(Locale.ROOT, " vendor_err=0x%x", wc.vendorErr()));
                if (wc.diagnosis() != null)
                {
                    sb.append("\n  why: ").append(wc.diagnosis().text().replace("\n", "\n       "));
                }
            }
        }
        return Outcome.ok(sb.toString());
    }
}
