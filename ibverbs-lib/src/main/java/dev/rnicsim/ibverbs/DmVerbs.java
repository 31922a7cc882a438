package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.DmAttr;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Device memory for C programs ({@code ibv_alloc_dm(3)}), the Java mirror of {@code src/main/c/wire_dm.h}: the
 * simulated device decides every call (max_dm_size, comp_mask, length, free pages, EBUSY, the MR's access and range:
 * the model's rules), and the bytes live in the program's own shared mapping of the device memory (as mlx5 maps
 * the MEMIC BAR pages into the process at {@code ibv_alloc_dm}): the library copies there without a message, and an
 * MR of {@code ibv_reg_dm_mr} is known to the data path ({@link Completions}) by that mapping's address, so that a
 * SEND, RDMA WRITE or READ naming the MR moves the real bytes to or from it.
 *
 * <p>Messages: DM_CAPS {ctx} answers max_dm_size; ALLOC_DM {ctx, log_align_req, comp_mask, pad, length} answers
 * {dm handle, copy unit}; FREE_DM {dm}; REG_DM_MR {pd, dm, access, pad, offset, length, va} then the call site,
 * answered as REG_MR is (the MR is then deregistered with DEREG_MR like any other).
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class DmVerbs
{
    static final int OP_DM_CAPS = 80;
    static final int OP_ALLOC_DM = 81;
    static final int OP_FREE_DM = 82;
    static final int OP_REG_DM_MR = 83;
    /** {@code struct wire_reg_dm_mr}: the call site follows it. */
    private static final int REG_DM_MR_BYTES = 40;

    private final Session s;

    DmVerbs(final Session session)
    {
        this.s = session;
    }

    /**
     * @param op a request of this class.
     * @param p  its payload.
     * @return the answer's payload (null for none).
     * @throws VerbsException the model's errno.
     */
    ByteBuffer call(final int op, final ByteBuffer p)
    {
        return switch (op)
        {
            case OP_DM_CAPS -> buf(8).putLong(0, s.get(p.getInt(0), Session.CtxInfo.class).device().profile()
                .maxDmSizeBytes());
            case OP_ALLOC_DM -> alloc(p);
            case OP_FREE_DM -> free(p.getInt(0));
            default -> regDmMr(p);
        };
    }

    private static ByteBuffer buf(final int bytes)
    {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private ByteBuffer alloc(final ByteBuffer p)
    {
        final Session.CtxInfo c = s.get(p.getInt(0), Session.CtxInfo.class);
        final DeviceMemory dm = c.context().allocDm(new DmAttr(p.getLong(16), p.getInt(4), p.getInt(8)));
        final int h = s.add(dm);
        return buf(8).putInt(0, h).putInt(4, dm.copyGranuleBytes());
    }

    /** ibv_free_dm: EBUSY while an MR uses it (the handle stays valid then). */
    private ByteBuffer free(final int h)
    {
        s.get(h, DeviceMemory.class).close();
        s.handles.set(h, null);
        return null;
    }

    /**
     * ibv_reg_dm_mr: the model registers the range (zero-based, keys like any MR's); the data path then finds the
     * MR's bytes at {@code va + offset} in the process, iova 0 being the range's first byte.
     */
    private ByteBuffer regDmMr(final ByteBuffer p)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final DeviceMemory dm = s.get(p.getInt(4), DeviceMemory.class);
        final int accessBits = p.getInt(8);
        final long offset = p.getLong(16);
        final long length = p.getLong(24);
        final long va = p.getLong(32);
        final byte[] siteBytes = new byte[Math.max(0, p.limit() - REG_DM_MR_BYTES)];
        p.get(REG_DM_MR_BYTES, siteBytes);
        final String site = new String(siteBytes, StandardCharsets.UTF_8);
        final MemoryRegion mr = pd.regDmMr(dm, offset, length, Access.fromBits(accessBits));
        final int deviceIndex = s.server.devices.indexOf(((SimPd) pd).context().device());
        final int h = s.add(null);
        final Session.MrInfo info = new Session.MrInfo(s, h, mr, deviceIndex, va + offset, length, 0,
            site.isEmpty() ? null : site);
        s.handles.set(h, info);
        s.server.mrs.put(Verbs.mrKey(deviceIndex, mr.lkey()), info);
        if (mr.rkey() != mr.lkey() && mr.rkey() != 0)
        {
            s.server.mrs.put(Verbs.mrKey(deviceIndex, mr.rkey()), info);
        }
        return buf(16).putInt(0, h).putInt(4, mr.lkey()).putInt(8, mr.rkey());
    }
}
