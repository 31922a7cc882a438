package dev.rnicsim.scenarios.script;

import dev.rnicsim.simnic.SimContext;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.simnic.SimPeerMr;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MrInitAttr;
import java.util.Locale;
import java.util.Set;

/**
 * Script verbs of the conformance work that do not fit the older verbs' shapes: {@code regex} ({@code
 * ibv_reg_mr_ex}). Stateless.
 */
final class ConformanceVerbs
{
    private ConformanceVerbs()
    {
    }

    /**
     * {@code regex NAME PD SIZE [addr=ADDR] [dmabuf=FD] [offset=N] [iova=ADDR] [access=FLAGS] [mask=N]}: the comp_mask
     * is made of the options given (addr= ADDR, dmabuf= FD, offset= FD_OFFSET, iova= IOVA) unless {@code mask=}
     * gives it outright.
     */
    static Outcome regMrEx(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final long length = s.evalNum(l, l.args().get(2));
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access", "local_write"));
        long mask = 0;
        mask |= l.options().containsKey("addr") ? MrInitAttr.MASK_ADDR : 0;
        mask |= l.options().containsKey("dmabuf") ? MrInitAttr.MASK_FD : 0;
        mask |= l.options().containsKey("offset") ? MrInitAttr.MASK_FD_OFFSET : 0;
        mask |= l.options().containsKey("iova") ? MrInitAttr.MASK_IOVA : 0;
        if (l.options().containsKey("mask"))
        {
            mask = s.evalNum(l, l.options().get("mask"));
        }
        final MrInitAttr in = new MrInitAttr(mask, num(s, l, "addr"), length, num(s, l, "iova"),
            (int)num(s, l, "dmabuf"), num(s, l, "offset"), access);
        final MemoryRegion mr = pd.regMrEx(in);
        s.names.put(l.args().get(0), mr);
        if (mr instanceof SimPeerMr peer)
        {
            // As reg ... dmabuf=: the GPU address of the MR's first byte, for addresses relative to it.
            final dev.rnicsim.simnic.SimDmabuf d = pd.context().device().host().dmabuf(in.fd());
            final long offset = (mask & MrInitAttr.MASK_FD_OFFSET) != 0 ? in.fdOffset() : 0;
            s.peerFirstVa.put(peer, d == null ? offset : d.buffer().gpuVa() + d.offset() + offset);
        }
        return Outcome.ok(String.format(Locale.ROOT, "ibv_reg_mr_ex comp_mask=0x%x (%s mode): lkey=0x%08x "
            + "rkey=0x%08x", mask, (mask & MrInitAttr.MASK_ADDR) != 0 ? "address" : "fd", mr.lkey(), mr.rkey()));
    }

    /**
     * {@code queryport CONTEXT [PORT]}: ibv_query_port (port 1 by default). The MTUs as ibv_devinfo prints them
     * (rdma-core libibverbs/examples/devinfo.c {@code mtu_str}: the bytes, then the enum ibv_mtu code in
     * parentheses, {@code 4096 (5)}).
     */
    static Outcome queryPort(final Session s, final ScriptLine l)
    {
        final int port = l.args().size() > 1 ? s.evalInt(l, l.args().get(1)) : 1;
        final dev.rnicsim.verbs.PortAttributes p = s.get(l, l.args().get(0), SimContext.class).queryPort(port);
        return Outcome.ok(String.format(Locale.ROOT, "port %d: state %d, max_mtu %d (%d), active_mtu %d (%d), "
            + "gid_tbl_len %d, port_cap_flags 0x%x, max_msg_sz 0x%x, pkey_tbl_len %d, link_layer %s", port, p.state(),
            dev.rnicsim.verbs.QpAttr.mtuBytes(p.maxMtu()), p.maxMtu(), dev.rnicsim.verbs.QpAttr.mtuBytes(p.activeMtu()),
            p.activeMtu(), p.gidTblLen(), p.portCapFlags(), p.maxMsgSzBytes(), p.pkeyTblLen(),
            p.linkLayer() == dev.rnicsim.verbs.PortAttributes.LINK_LAYER_ETHERNET ? "Ethernet"
                : p.linkLayer() == dev.rnicsim.verbs.PortAttributes.LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified"));
    }

    /** {@code querygid CONTEXT PORT INDEX}: ibv_query_gid_ex. */
    static Outcome queryGid(final Session s, final ScriptLine l)
    {
        final dev.rnicsim.verbs.GidEntry e = s.get(l, l.args().get(0), SimContext.class).queryGidEntry(
            s.evalInt(l, l.args().get(1)), s.evalInt(l, l.args().get(2)));
        return Outcome.ok("GID " + dev.rnicsim.simnic.GidTable.text(e.gid())
            + (e.gidType() == dev.rnicsim.verbs.GidType.IB ? "" : ", " + typeName(e.gidType())));
    }

    /** @return "RoCE v1" or "RoCE v2", as ibv_devinfo -v and show_gids name a RoCE GID's type. */
    static String typeName(final dev.rnicsim.verbs.GidType t)
    {
        return t == dev.rnicsim.verbs.GidType.ROCE_V1 ? "RoCE v1" : "RoCE v2";
    }

    /** {@code dm NAME CONTEXT SIZE [mask=N] [align=N]}: ibv_alloc_dm with comp_mask and log_align_req. */
    static Outcome allocDm(final Session s, final ScriptLine l)
    {
        final dev.rnicsim.verbs.DmAttr attr = new dev.rnicsim.verbs.DmAttr(s.evalNum(l, l.args().get(2)),
            (int)num(s, l, "align"), (int)num(s, l, "mask"));
        final DeviceMemory dm = s.get(l, l.args().get(1), SimContext.class).allocDm(attr);
        s.names.put(l.args().get(0), dm);
        return Outcome.ok("ibv_alloc_dm: " + Units.bytes(dm.lengthBytes()) + " of device memory");
    }

    /** {@code dmwrite DM OFFSET DATA}: ibv_memcpy_to_dm. */
    static Outcome dmWrite(final Session s, final ScriptLine l)
    {
        final DeviceMemory dm = s.get(l, l.args().get(0), DeviceMemory.class);
        final byte[] data = ProcessVerbs.data(l.args().get(2));
        dm.memcpyTo(s.evalNum(l, l.args().get(1)), data);
        return Outcome.ok("ibv_memcpy_to_dm: " + data.length + " bytes");
    }

    /** {@code dmread DM OFFSET ADDR SIZE}: ibv_memcpy_from_dm into the process's memory at ADDR. */
    static Outcome dmRead(final Session s, final ScriptLine l)
    {
        final DeviceMemory dm = s.get(l, l.args().get(0), DeviceMemory.class);
        final Session.Val at = s.eval(l, l.args().get(2));
        if (at.process() == null)
        {
            throw l.error("'" + l.args().get(2) + "' is no address of a process (a name from 'mmap', with + offsets)");
        }
        final byte[] bytes = dm.memcpyFrom(s.evalNum(l, l.args().get(1)), s.evalInt(l, l.args().get(3)));
        at.process().write(at.num(), bytes);
        return Outcome.ok("ibv_memcpy_from_dm: " + bytes.length + " bytes to 0x" + Long.toHexString(at.num()));
    }

    /** {@code regdm NAME PD DM OFFSET SIZE [access=FLAGS]}: ibv_reg_dm_mr. */
    static Outcome regDmMr(final Session s, final ScriptLine l)
    {
        final SimPd pd = s.get(l, l.args().get(1), SimPd.class);
        final DeviceMemory dm = s.get(l, l.args().get(2), DeviceMemory.class);
        final Set<Access> access = Spec.accessFlags(l.options().getOrDefault("access", "local_write,zero_based"));
        final MemoryRegion mr = pd.regDmMr(dm, s.evalNum(l, l.args().get(3)), s.evalNum(l, l.args().get(4)), access);
        s.names.put(l.args().get(0), mr);
        return Outcome.ok(String.format(Locale.ROOT, "ibv_reg_dm_mr: lkey=0x%08x rkey=0x%08x, zero-based over device "
            + "memory", mr.lkey(), mr.rkey()));
    }

    private static long num(final Session s, final ScriptLine l, final String option)
    {
        return l.options().containsKey(option) ? s.evalNum(l, l.options().get(option)) : 0;
    }
}
