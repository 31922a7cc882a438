package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.MemoryWindow;
import dev.rnicsim.verbs.MrAdvice;
import dev.rnicsim.verbs.MwBindInfo;
import dev.rnicsim.verbs.MwType;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.SendWr;
import dev.rnicsim.verbs.Sge;
import dev.rnicsim.verbs.VerbsException;
import dev.rnicsim.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The memory verbs beyond ibv_reg_mr and ibv_dereg_mr, carried out on the simulated device: {@code ibv_rereg_mr}
 * (ibv_rereg_mr(3)), {@code ibv_advise_mr} (ibv_advise_mr(3)), memory windows ({@code ibv_alloc_mw},
 * {@code ibv_dealloc_mw}, and the BIND_MW, LOCAL_INV and SEND_WITH_INV work requests of wire.h). Each answers
 * with the model's errno, so a program sees what libibverbs, the kernel and mlx5 tell it.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class MemoryVerbs
{
    private static final int EPROTO = 71;
    private final Session s;
    private final Verbs verbs;
    private final DmVerbs dm;
    private final MrKindVerbs mrKinds;

    MemoryVerbs(final Session session, final Verbs verbs)
    {
        this.s = session;
        this.verbs = verbs;
        this.dm = new DmVerbs(session);
        this.mrKinds = new MrKindVerbs(session);
    }

    /**
     * @param op a request of this class.
     * @param p  its payload.
     * @return the answer's payload (null for none).
     * @throws VerbsException the model's errno; EPROTO for a request nobody serves.
     */
    ByteBuffer call(final int op, final ByteBuffer p)
    {
        return switch (op)
        {
            case Wire.OP_REREG_MR -> rereg(p);
            case Wire.OP_ADVISE_MR -> advise(p);
            case Wire.OP_ALLOC_MW -> allocMw(p.getInt(0), p.getInt(4));
            case Wire.OP_DEALLOC_MW -> deallocMw(p.getInt(0));
            case DmVerbs.OP_DM_CAPS, DmVerbs.OP_ALLOC_DM, DmVerbs.OP_FREE_DM, DmVerbs.OP_REG_DM_MR -> dm.call(op, p);
            case MrKindVerbs.OP_ALLOC_NULL_MR, MrKindVerbs.OP_REG_DMABUF_MR -> mrKinds.call(op, p);
            default -> throw new VerbsException("request", EPROTO, "unknown request " + op);
        };
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** REREG_MR: the errno and ibv_rereg_mr's return value travel in the answer, with the keys after success. */
    private ByteBuffer rereg(final ByteBuffer p)
    {
        final Session.MrInfo m = s.get(p.getInt(0), Session.MrInfo.class);
        final int flagBits = p.getInt(4);
        final int pdHandle = p.getInt(8);
        final int accessBits = p.getInt(12);
        final long addr = p.getLong(16);
        final long length = p.getLong(24);
        final Set<ReregFlag> flags = EnumSet.noneOf(ReregFlag.class);
        for (final ReregFlag f : ReregFlag.values())
        {
            if ((flagBits & f.bit()) != 0)
            {
                flags.add(f);
            }
        }
        final ByteBuffer b = buf(16);
        if ((flagBits & ~ReregFlag.toBits(EnumSet.allOf(ReregFlag.class))) != 0)
        {
            // libibverbs verbs.c ibv_rereg_mr: flags beyond IBV_REREG_MR_FLAGS_SUPPORTED
            return b.putInt(0, 22).putInt(4, ReregException.ERR_INPUT);
        }
        try
        {
            final ProtectionDomain pd = flags.contains(ReregFlag.CHANGE_PD) ? s.get(pdHandle, ProtectionDomain.class)
                : null;
            if (flags.contains(ReregFlag.CHANGE_TRANSLATION) && addr != 0 && length > 0)
            {
                verbs.mirror(addr, length);
            }
            final int oldLkey = m.mr().lkey();
            final int oldRkey = m.mr().rkey();
            m.mr().rereg(flags, pd, addr, length, Access.fromBits(accessBits));
            s.server.mrs.remove(Verbs.mrKey(m.deviceIndex(), oldLkey));
            s.server.mrs.remove(Verbs.mrKey(m.deviceIndex(), oldRkey));
            final boolean moved = flags.contains(ReregFlag.CHANGE_TRANSLATION);
            final Session.MrInfo now = new Session.MrInfo(s, m.handle(), m.mr(), m.deviceIndex(),
                moved ? addr : m.addr(), moved ? length : m.lengthBytes(), moved ? addr : m.iova(), m.regSite());
            s.handles.set(m.handle(), now);
            s.server.mrs.put(Verbs.mrKey(m.deviceIndex(), m.mr().lkey()), now);
            if (m.mr().rkey() != 0)
            {
                s.server.mrs.put(Verbs.mrKey(m.deviceIndex(), m.mr().rkey()), now);
            }
            return b.putInt(8, m.mr().lkey()).putInt(12, m.mr().rkey());
        }
        catch (final ReregException e)
        {
            return b.putInt(0, e.errno()).putInt(4, e.reregError());
        }
        catch (final VerbsException e)
        {
            // the kernel's command failed (a PD handle the process does not have, say): the MR may only be freed
            return b.putInt(0, e.errno()).putInt(4, ReregException.ERR_CMD);
        }
    }

    private ByteBuffer advise(final ByteBuffer p)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final int advice = p.getInt(4);
        final int flags = p.getInt(8);
        final int count = p.getInt(12);
        MrAdvice a = null;
        for (final MrAdvice x : MrAdvice.values())
        {
            if (x.code() == advice)
            {
                a = x;
            }
        }
        if (a == null)
        {
            throw new VerbsException("ibv_advise_mr", 22, "advice " + advice + " is none of PREFETCH (0), "
                + "PREFETCH_WRITE (1) and PREFETCH_NO_FAULT (2)");
        }
        final List<Sge> sgl = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            final int at = 16 + i * Wire.SGE_BYTES;
            sgl.add(new Sge(p.getLong(at), p.getInt(at + 8) & 0xffffffffL, p.getInt(at + 12)));
        }
        // An ODP MR (an implicit one above all) covers memory the program may have mapped after registering it:
        // the prefetch faults in what the real process maps now, as the kernel's page walk would.
        for (final Sge g : sgl)
        {
            verbs.mirror(g.addr(), g.lengthBytes());
        }
        pd.adviseMr(a, flags, sgl);
        return null;
    }

    private ByteBuffer allocMw(final int pdHandle, final int type)
    {
        final ProtectionDomain pd = s.get(pdHandle, ProtectionDomain.class);
        final MemoryWindow mw = pd.allocMw(type);
        s.server.windows.add(mw);
        final int h = s.add(mw);
        return buf(8).putInt(0, h).putInt(4, mw.rkey());
    }

    private ByteBuffer deallocMw(final int h)
    {
        s.get(h, MemoryWindow.class).close();
        s.handles.set(h, null);
        return null;
    }

    /**
     * Posts one send-queue request of a program: BIND_MW with the window and MR its handles name (a type 1 window
     * through {@link QueuePair#bindMw}, as ibv_bind_mw posts it; type 2 as the program's own BIND_MW), LOCAL_INV
     * and SEND_WITH_INV with the rkey to invalidate that travels in imm_data; the others as they are.
     *
     * @param s  the program's session.
     * @param qp the QP.
     * @param wr the request as the library sent it (see wire.h for the fields a BIND_MW uses).
     */
    static void post(final Session s, final QueuePair qp, final SendWr wr)
    {
        if (wr.opcode() == WrOpcode.BIND_MW)
        {
            final MemoryWindow mw = s.get((int) (wr.swap() >>> 32), MemoryWindow.class);
            final int mrHandle = (int) wr.swap();
            final MemoryRegion mr = mrHandle == 0 ? null : s.get(mrHandle, Session.MrInfo.class).mr();
            final MwBindInfo info = new MwBindInfo(mr, wr.remoteAddr(), wr.compareAdd(), Access.fromBits(wr.immData()));
            if (mw.type() == MwType.TYPE_1)
            {
                qp.bindMw(mw, wr.wrId(), wr.flags(), info);
            }
            else
            {
                qp.postSend(List.of(new SendWr(wr.wrId(), WrOpcode.BIND_MW, List.of(), wr.flags(), 0, 0, 0, 0, 0, 0,
                    new SendWr.Bind(mw, wr.rkey(), info))));
            }
            return;
        }
        if (wr.opcode() == WrOpcode.LOCAL_INV || wr.opcode() == WrOpcode.SEND_WITH_INV)
        {
            qp.postSend(List.of(new SendWr(wr.wrId(), wr.opcode(), wr.sgList(), wr.flags(), 0, 0, 0, 0, 0,
                wr.immData(), null)));
            return;
        }
        qp.postSend(List.of(wr));
    }
}
