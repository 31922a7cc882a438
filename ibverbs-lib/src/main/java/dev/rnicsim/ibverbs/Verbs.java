package dev.rnicsim.ibverbs;

import dev.rnicsim.pagetable.UserProcess;
import dev.rnicsim.simnic.DriverTraits;
import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimDevice;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpAddress;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * The control verbs of one process, carried out on the simulated devices: each request's answer carries the errno
 * the model gave ({@link VerbsException#errno()}), so a program sees what a real stack tells it.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class Verbs
{
    private static final int EINVAL = 22;
    private static final int EPROTO = 71;
    private final Session s;
    private final MemoryVerbs memory;
    private final SrqVerbs srqs;
    private final UdVerbs ud;
    private final XrcVerbs xrc;

    Verbs(final Session session)
    {
        this.s = session;
        this.memory = new MemoryVerbs(session, this);
        this.srqs = new SrqVerbs(session);
        this.ud = new UdVerbs(session);
        this.xrc = new XrcVerbs(session);
    }

    /**
     * @return true when the request posted work (the device then has something to do).
     */
    boolean dispatch(final int op, final int seq, final ByteBuffer p)
    {
        if (op == Wire.OP_POST_SEND || op == Wire.OP_POST_RECV || op == Wire.OP_POST_SRQ_RECV)
        {
            try
            {
                if (op == Wire.OP_POST_SRQ_RECV)
                {
                    srqs.post(p);
                }
                else if (op == Wire.OP_POST_SEND && s.strict)
                {
                    postSendAt(p);
                }
                else if (op == Wire.OP_POST_SEND)
                {
                    s.server.completions.postSend(s, p);
                }
                else
                {
                    s.server.completions.postRecv(s, p);
                }
            }
            catch (final RuntimeException e)
            {
                // a doorbell has no answer: the program learns it on its stderr (a QP destroyed already, say)
                s.sendText("rnicsim: " + (op == Wire.OP_POST_SEND ? "ibv_post_send" : "ibv_post_recv")
                    + " refused by the device after the verb returned: " + e.getMessage() + "\n");
            }
            return true;
        }
        if (op == Wire.OP_POST_SITE)
        {
            try
            {
                s.get(p.getInt(0), Session.QpInfo.class).postSite = text(p, 8);
            }
            catch (final RuntimeException e)
            {
                // no such QP: its POST_SEND is refused and says so
            }
            return false;
        }
        int err = 0;
        ByteBuffer answer = null;
        final String site = op == Wire.OP_REG_MR ? text(p, 32) : op == Wire.OP_DEREG_MR ? text(p, 8) : null;
        s.server.fabric.origin(site == null || site.isEmpty() ? null : site);
        try
        {
            answer = call(op, p, site);
        }
        catch (final VerbsException e)
        {
            err = e.errno();
            if (s.strict)
            {
                Refusal.send(s, op, e); // the library reports it with the verb's C call site
            }
        }
        catch (final RuntimeException e)
        {
            err = Refusal.modelRefusal(s, op, e);
        }
        finally
        {
            s.server.fabric.origin(null);
        }
        s.send(op, seq, err, answer);
        return op == Wire.OP_MODIFY_QP || op == Wire.OP_DEREG_MR || op == Wire.OP_DESTROY_QP;
    }

    /**
     * A POST_SEND in strict mode: the call site the library sent just before it (POST_SITE) is the origin the device
     * records as the requests' post site, which their diagnoses and warnings name.
     */
    private void postSendAt(final ByteBuffer p)
    {
        final Session.QpInfo q = s.get(p.getInt(0), Session.QpInfo.class);
        s.server.fabric.origin(q.postSite);
        try
        {
            s.server.completions.postSend(s, p);
        }
        finally
        {
            s.server.fabric.origin(null);
            q.postSite = null;
        }
    }

    private static String text(final ByteBuffer p, final int from)
    {
        final byte[] b = new byte[Math.max(0, p.limit() - from)];
        p.get(from, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private ByteBuffer call(final int op, final ByteBuffer p, final String site)
    {
        return switch (op)
        {
            case Wire.OP_HELLO -> hello(p);
            case Wire.OP_OPEN -> open(p.getInt(0));
            case Wire.OP_CLOSE_CTX -> closeContext(p.getInt(0));
            case Wire.OP_QUERY_DEVICE -> QueryVerbs.queryDevice(s.get(p.getInt(0), Session.CtxInfo.class));
            case Wire.OP_QUERY_PORT -> QueryVerbs.queryPort(s.get(p.getInt(0), Session.CtxInfo.class), p.getInt(4));
            case Wire.OP_QUERY_GID -> QueryVerbs.queryGid(s.get(p.getInt(0), Session.CtxInfo.class), p.getInt(4),
                p.getInt(8));
            case Wire.OP_ALLOC_PD -> handle(s.add(s.get(p.getInt(0), Session.CtxInfo.class).context().allocPd()));
            case Wire.OP_DEALLOC_PD -> deallocPd(p.getInt(0));
            case Wire.OP_ATTACH -> null; // a run attached to the fabric: counted while connected
            case Wire.OP_CREATE_SRQ -> srqs.create(p, deviceOf(s.get(p.getInt(0), ProtectionDomain.class)));
            case Wire.OP_MODIFY_SRQ -> srqs.modify(p);
            case Wire.OP_QUERY_SRQ -> srqs.query(p.getInt(0));
            case Wire.OP_DESTROY_SRQ -> srqs.destroy(p.getInt(0));
            case Wire.OP_CREATE_AH -> ud.createAh(p);
            case Wire.OP_DESTROY_AH -> ud.destroyAh(p.getInt(0));
            case Wire.OP_OPEN_XRCD -> xrc.open(p);
            case Wire.OP_CLOSE_XRCD -> xrc.close(p.getInt(0));
            case Wire.OP_CREATE_XRC_SRQ -> xrc.createSrq(p, srqs);
            case XrcVerbs.OP_OPEN_QP -> xrc.openQp(p);
            case Wire.OP_QUERY_QP -> QueryVerbs.queryQp(s.get(p.getInt(0), Session.QpInfo.class));
            case Wire.OP_REG_MR -> regMr(p, site);
            case Wire.OP_DEREG_MR -> deregMr(p.getInt(0));
            case Wire.OP_CREATE_CQ -> createCq(p.getInt(0), p.getInt(4), p.limit() >= 12 ? p.getInt(8) : 0);
            case Wire.OP_DESTROY_CQ -> destroyCq(p.getInt(0));
            case Wire.OP_CREATE_QP -> createQp(p);
            case Wire.OP_MODIFY_QP -> modifyQp(p);
            case Wire.OP_DESTROY_QP -> destroyQp(p.getInt(0));
            case Wire.OP_LEAKS -> leaks();
            default -> CqExVerbs.handles(op) ? CqExVerbs.call(s, op, p)
                : TmVerbs.handles(op) ? TmVerbs.call(s, srqs, op, p) : memory.call(op, p);
        };
    }

    private static ByteBuffer handle(final int h)
    {
        return buf(8).putInt(0, h);
    }

    private ByteBuffer hello(final ByteBuffer p)
    {
        if (p.getInt(0) != Wire.VERSION)
        {
            throw new VerbsException("hello", EPROTO, "the library speaks version " + p.getInt(0)
                + " of the fabric protocol, this server " + Wire.VERSION + ": rebuild with ./rnicsim");
        }
        s.pid = p.getInt(4);
        final long memlock = p.getLong(8);
        s.strict = p.getInt(28) != 0;
        if (s.strict)
        {
            s.server.strictChecks();
        }
        final UserProcess proc = s.server.host.host().spawn("pid-" + s.pid);
        proc.rlimitMemlockBytes(memlock < 0 ? Long.MAX_VALUE : memlock); // RLIM_INFINITY is all ones
        proc.capIpcLock(p.getInt(24) != 0);
        s.process = proc;
        final List<SimDevice> devs = s.server.devices;
        final ByteBuffer b = buf(8 + devs.size() * Wire.DEVICE_BYTES);
        b.putInt(0, devs.size());
        for (int i = 0; i < devs.size(); i++)
        {
            final int at = 8 + i * Wire.DEVICE_BYTES;
            final byte[] name = s.server.hcaIds.get(i).getBytes(StandardCharsets.UTF_8);
            b.put(at, name, 0, Math.min(63, name.length));
            b.putLong(at + 64, Long.reverseBytes(devs.get(i).attributes().nodeGuid()));
            // the node type and transport libibverbs reads from sysfs (ibv_devinfo's "transport:" line): CA and IB,
            // RNIC and iWARP (siw, cxgb4, erdma, irdma in iWARP mode), UNSPECIFIED for efa
            final DriverTraits.Transport t = devs.get(i).profile().traits().transport();
            b.putInt(at + 72, switch (t)
            {
                case INFINIBAND -> 1; // IBV_NODE_CA
                case IWARP -> 4; // IBV_NODE_RNIC
                case UNSPECIFIED -> 7; // IBV_NODE_UNSPECIFIED
            });
            b.putInt(at + 76, t.code());
        }
        return b;
    }

    private ByteBuffer open(final int deviceIndex)
    {
        if (deviceIndex < 0 || deviceIndex >= s.server.devices.size())
        {
            throw new VerbsException("ibv_open_device", 19, "no device " + deviceIndex); // ENODEV
        }
        final SimDevice d = s.server.devices.get(deviceIndex);
        final Session.CtxInfo c = new Session.CtxInfo(d.open(s.process), d, deviceIndex);
        // the answer carries num_comp_vectors, which ibv_open_device puts in the context
        return handle(s.add(c)).putInt(4, c.context().numCompVectors());
    }

    private ByteBuffer closeContext(final int h)
    {
        final Session.CtxInfo c = s.get(h, Session.CtxInfo.class);
        for (int i = 0; i < s.handles.size(); i++)
        {
            final Object o = s.handles.get(i);
            if (o instanceof Session.QpInfo q && q.qp.pd().context() == c.context())
            {
                forgetQp(q);
                s.handles.set(i, null);
            }
            else if (o instanceof Session.MrInfo m && m.mr().pd().context() == c.context())
            {
                // this context's MRs only: another context of the process on the same device keeps its own
                s.server.mrs.remove(mrKey(m.deviceIndex(), m.mr().lkey()));
                s.server.mrs.remove(mrKey(m.deviceIndex(), m.mr().rkey()));
                s.handles.set(i, null);
            }
        }
        c.context().close();
        s.handles.set(h, null);
        return null;
    }

    /** ibv_dealloc_pd: EBUSY while the PD has MRs, windows, QPs, SRQs or AHs (the kernel's use count), as
     * {@link ProtectionDomain#dealloc()} answers; closing would free them. */
    private ByteBuffer deallocPd(final int h)
    {
        s.get(h, ProtectionDomain.class).dealloc();
        s.handles.set(h, null);
        return null;
    }

    /** The LID of a device's port 1 on the fabric's subnet: its index + 1 (LID 0 is reserved). */
    static int lid(final int deviceIndex)
    {
        return deviceIndex + 1;
    }

    static long mrKey(final int deviceIndex, final int key)
    {
        return ((long) deviceIndex << 32) | (key & 0xffffffffL);
    }

    private ByteBuffer regMr(final ByteBuffer p, final String site)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final int accessBits = p.getInt(4);
        final long addr = p.getLong(8);
        final long length = p.getLong(16);
        final long iova = p.getLong(24);
        mirror(addr, length);
        final Set<Access> access = Access.fromBits(accessBits);
        final MemoryRegion mr = iova == addr ? pd.regMr(addr, length, access) : pd.regMr(addr, length, iova, access);
        final int deviceIndex = deviceOf(pd);
        final int h = s.add(null);
        final Session.MrInfo info = new Session.MrInfo(s, h, mr, deviceIndex, addr, length, iova, site);
        s.handles.set(h, info);
        s.server.mrs.put(mrKey(deviceIndex, mr.lkey()), info);
        if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
        {
            s.server.mrs.put(mrKey(deviceIndex, mr.rkey()), info);
        }
        final ByteBuffer b = buf(16);
        b.putInt(0, h).putInt(4, mr.lkey()).putInt(8, mr.rkey());
        return b;
    }

    private int deviceOf(final ProtectionDomain pd)
    {
        final dev.rnicsim.simnic.SimPd sp = (dev.rnicsim.simnic.SimPd) pd;
        return s.server.devices.indexOf(sp.context().device());
    }

    /** Mirrors the real process's mappings over [addr, addr + length) into its modelled twin ({@link ProcessMirror}). */
    void mirror(final long addr, final long length)
    {
        ProcessMirror.mirror(s.process, s.pid, addr, length);
    }

    private ByteBuffer deregMr(final int h)
    {
        final Session.MrInfo m = s.get(h, Session.MrInfo.class);
        m.mr().close();
        s.server.mrs.remove(mrKey(m.deviceIndex(), m.mr().lkey()));
        s.server.mrs.remove(mrKey(m.deviceIndex(), m.mr().rkey()));
        s.handles.set(h, null);
        return null;
    }

    private ByteBuffer createCq(final int ctx, final int cqe, final int compVector)
    {
        final Session.CtxInfo owner = s.get(ctx, Session.CtxInfo.class);
        if (owner.device().profile().follows(dev.rnicsim.simnic.ProviderRule.CQ_NEEDS_PARENT_DOMAIN_ALLOCATORS))
        {
            throw new VerbsException("ibv_create_cq", EINVAL, "the " + owner.device().profile().driver()
                + " provider (rdma-core 44's libmana, mana_create_cq) allocates no CQ buffer itself: \"Allocating core "
                + "buffers for CQ is not supported\" without a parent domain's allocators, which serve DPDK; run the "
                + "program on a profile whose provider makes CQs (mlx5, rxe, ...)");
        }
        final CompletionQueue cq = owner.context().createCq(cqe, compVector);
        final int h = s.add(null);
        s.handles.set(h, new Session.CqInfo(s, h, cq));
        return buf(8).putInt(0, h).putInt(4, cq.cqe());
    }

    private ByteBuffer destroyCq(final int h)
    {
        final Session.CqInfo c = s.get(h, Session.CqInfo.class);
        c.cq().close();
        s.handles.set(h, null);
        return null;
    }

    private ByteBuffer createQp(final ByteBuffer p)
    {
        final int typeCode = p.getInt(12);
        if (typeCode == QpType.XRC_RECV.code())
        {
            return xrc.createRecvQp(p);
        }
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final Session.CqInfo scq = s.get(p.getInt(4), Session.CqInfo.class);
        // an XRC_SEND QP has no receive CQ (the kernel keeps none for XRC_INI)
        final Session.CqInfo rcq = p.getInt(8) == 0 && typeCode == QpType.XRC_SEND.code() ? scq
            : s.get(p.getInt(8), Session.CqInfo.class);
        QpType type = null;
        for (final QpType t : QpType.values())
        {
            if (t.code() == typeCode)
            {
                type = t;
            }
        }
        if (type == null)
        {
            throw UnknownQpType.refusal(s.server.devices.get(deviceOf(pd)).profile(), typeCode, p.getInt(24));
        }
        final QpCap cap = new QpCap(p.getInt(24), p.getInt(28), p.getInt(32), p.getInt(36), p.getInt(40));
        if (p.limit() >= 56)
        {
            dev.rnicsim.simnic.QpCreateFlags.check(s.server.devices.get(deviceOf(pd)).profile(), type,
                Integer.toUnsignedLong(p.getInt(48)));
        }
        // every work request is signalled to the model, so each one's outcome is known (see Completions)
        final int srqHandle = p.getInt(20);
        final QpInitAttr init = new QpInitAttr(scq.cq(), rcq.cq(), type, cap, false)
            .withSendOps(p.limit() >= 56 ? SendOpsFlags.opcodes(p.getInt(52)) : null);
        final QueuePair qp = pd.createQp(srqHandle == 0 ? init : init.withSrq(srqs.srq(srqHandle)));
        final int deviceIndex = deviceOf(pd);
        final int h = s.add(null);
        final Session.QpInfo info = new Session.QpInfo(s, h, qp, deviceIndex, scq, rcq);
        s.handles.set(h, info);
        s.server.qps.put(Session.QpInfo.key(deviceIndex, qp.qpNum()), info);
        final SimDevice dev = s.server.devices.get(deviceIndex);
        final int inlineErrno = PostRules.inlineOverflowErrno(dev);
        final int postRules = PostRules.of(dev, type);
        // what the provider granted, which ibv_create_qp writes back into attr->cap (QpCaps)
        final QpCap granted = qp.cap();
        final ByteBuffer b = buf(40);
        b.putInt(0, h).putInt(4, qp.qpNum()).putInt(8, granted.maxSendWr()).putInt(12, granted.maxRecvWr())
            .putInt(16, granted.maxSendSge()).putInt(20, granted.maxRecvSge())
            .putInt(24, granted.maxInlineDataBytes())
            .putInt(28, inlineErrno).putInt(32, postRules);
        return b;
    }

    private ByteBuffer modifyQp(final ByteBuffer p)
    {
        final Session.QpInfo q = s.get(p.getInt(0), Session.QpInfo.class);
        final int mask = p.getInt(4);
        final ModifyQpCall call = ModifyQpCall.of(p, q.qp.type());
        if (call != null)
        {
            // the program's whole call, checked as the kernel checks it, before the change is applied below
            dev.rnicsim.simnic.QpModifyCheck.check((dev.rnicsim.simnic.SimQp) q.qp, call.attr(), call.mask());
            IwarpConnection.checkRts(s.server.devices.get(q.deviceIndex), q.qp.state(), call.attr(), call.mask());
        }
        if (q.qp.type() == QpType.UD)
        {
            ud.modify(q.qp, p);
            return null;
        }
        final int to = p.getInt(8);
        final int from = q.qp.state().ordinal();
        final boolean stepped = (mask & Wire.QP_STATE) != 0 && (to == Wire.QPS_INIT || to == Wire.QPS_ERR
            || to == Wire.QPS_RESET || to == Wire.QPS_RTR && from == Wire.QPS_INIT
            || to == Wire.QPS_RTS && from == Wire.QPS_RTR);
        if (!stepped && call != null)
        {
            q.qp.modify(call.attr(), call.mask()); // RTS to RTS, SQD, SQE, or attributes without a state change
            return null;
        }
        if ((mask & Wire.QP_STATE) == 0)
        {
            return null; // attributes the model does not keep (timeouts, PSNs without a state change)
        }
        switch (p.getInt(8))
        {
            case Wire.QPS_INIT -> q.qp.modifyToInit(Access.fromBits(p.getInt(12)));
            case Wire.QPS_RTR ->
            {
                // an iWARP driver ignores the address vector (the connection manager's stream names the peer)
                final int peerDevice = p.getInt(52) == 0 && IwarpConnection.iwarp(s.server.devices.get(q.deviceIndex))
                    ? q.deviceIndex : resolvePeer(p, q);
                final int destQpn = p.getInt(16);
                // the program's path_mtu and source GID decide the packets' size and RoCE type (RoceWire)
                dev.rnicsim.simnic.ProgramRtr.modifyToRtr((dev.rnicsim.simnic.SimQp)q.qp, new QpAddress(lid(peerDevice),
                    s.server.devices.get(peerDevice).gid(), destQpn, p.getInt(20)), p.getInt(44),
                    (mask & dev.rnicsim.verbs.QpAttrMask.PATH_MTU.bit()) != 0 ? p.getInt(28) : 0,
                    p.getInt(52) != 0 && p.limit() >= 108 ? p.getInt(104) : -1);
                q.peerDeviceIndex = peerDevice;
                q.peerQpNum = destQpn;
                final Session.QpInfo made = s.server.qps.get(Session.QpInfo.key(q.deviceIndex, q.qp.qpNum()));
                if (q.opened && made != null) // the data path knows the QP by the handle that made it
                {
                    made.peerDeviceIndex = peerDevice;
                    made.peerQpNum = destQpn;
                }
            }
            case Wire.QPS_RTS -> q.qp.modifyToRts(p.getInt(36), p.getInt(40));
            case Wire.QPS_ERR -> q.qp.modifyToError();
            case Wire.QPS_RESET ->
            {
                // Any state to RESET (the kernel's qp_state_table): the queues are emptied, the QP can be set up again.
                final dev.rnicsim.verbs.QpAttr.Builder reset = dev.rnicsim.verbs.QpAttr.builder()
                    .state(dev.rnicsim.verbs.QpState.RESET);
                q.qp.modify(reset.build(), reset.mask());
            }
            default -> throw new VerbsException("ibv_modify_qp", EINVAL, "transition to state " + p.getInt(8)
                + " is not simulated (RESET, INIT, RTR, RTS and ERR are); use one of those");
        }
        return null;
    }

    /** The device an address vector names: by GID when it has a GRH, else by LID. */
    private int resolvePeer(final ByteBuffer p, final Session.QpInfo q)
    {
        final List<SimDevice> devs = s.server.devices;
        if (p.getInt(52) != 0)
        {
            final StringBuilder gid = new StringBuilder();
            for (int i = 0; i < 16; i += 2)
            {
                if (i > 0)
                {
                    gid.append(':');
                }
                gid.append(String.format("%02x%02x", p.get(56 + i), p.get(57 + i)));
            }
            for (int i = 0; i < devs.size(); i++)
            {
                if (dev.rnicsim.simnic.GidTable.holds(devs.get(i), gid.toString()))
                {
                    return i;
                }
            }
            throw new VerbsException("ibv_modify_qp", EINVAL, "no device of the fabric has GID " + gid);
        }
        final int dlid = p.getInt(48);
        if (dlid < 1 || dlid > devs.size())
        {
            throw new VerbsException("ibv_modify_qp", EINVAL, "no port of the fabric has LID " + dlid
                + " (LIDs 1.." + devs.size() + ")");
        }
        return dlid - 1;
    }

    private ByteBuffer destroyQp(final int h)
    {
        final Session.QpInfo q = s.get(h, Session.QpInfo.class);
        if (s.server.xrc.lastHandle(q.qp)) // an XRC target QP lives while any handle of ibv_open_qp is open on it
        {
            q.qp.close();
            s.server.qps.remove(Session.QpInfo.key(q.deviceIndex, q.qp.qpNum()));
        }
        s.handles.set(h, null);
        return null;
    }

    private void forgetQp(final Session.QpInfo q)
    {
        // the data path knows a QP by the handle that made it: another handle on it (ibv_open_qp) leaves it there
        s.server.qps.remove(Session.QpInfo.key(q.deviceIndex, q.qp.qpNum()), q);
    }

    private ByteBuffer leaks()
    {
        final StringBuilder t = new StringBuilder();
        for (final Object o : s.handles)
        {
            if (o instanceof Session.MrInfo m && MrKindVerbs.isNullMr(m))
            {
                t.append(String.format("rnicsim strict: null MR leaked at exit: lkey 0x%x, allocated by %s%n  fix: "
                    + "ibv_dereg_mr it before the program exits%n", m.mr().lkey(), m.regSite() == null
                    || m.regSite().isEmpty() ? "ibv_alloc_null_mr" : m.regSite()));
            }
            else if (o instanceof Session.MrInfo m)
            {
                t.append(String.format("rnicsim strict: MR leaked at exit: lkey 0x%x, [0x%x, 0x%x) (%d bytes), "
                    + "registered by %s%n  fix: ibv_dereg_mr it before the program exits (the kernel releases it "
                    + "at exit, but a long-running program keeps its pages pinned)%n", m.mr().lkey(), m.addr(),
                    m.addr() + m.lengthBytes(), m.lengthBytes(),
                    m.regSite() == null || m.regSite().isEmpty() ? "ibv_reg_mr" : m.regSite()));
            }
        }
        return ByteBuffer.wrap(t.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Releases everything of a process that has gone, as the kernel does when it closes the device file. */
    void releaseAll()
    {
        for (int i = 0; i < s.handles.size(); i++)
        {
            final Object o = s.handles.get(i);
            if (o instanceof Session.QpInfo q)
            {
                forgetQp(q);
            }
            else if (o instanceof Session.MrInfo m)
            {
                s.server.mrs.remove(mrKey(m.deviceIndex(), m.mr().lkey()));
                s.server.mrs.remove(mrKey(m.deviceIndex(), m.mr().rkey()));
            }
        }
        for (final Object o : s.handles)
        {
            if (o instanceof Session.CtxInfo c)
            {
                c.context().close();
            }
        }
        s.handles.clear();
        if (s.process != null && !s.process.exited())
        {
            s.process.exit();
        }
    }

    static SimContext contextOf(final Session.CtxInfo c)
    {
        return c.context();
    }
}
