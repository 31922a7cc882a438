package dev.rnicsim.ibverbs;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.ProviderRule;
import dev.rnicsim.simnic.SimPd;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The MR kinds beyond ibv_reg_mr for C programs, the Java mirror of {@code src/main/c/wire_mr.h}:
 * {@code ibv_alloc_null_mr} and {@code ibv_reg_dmabuf_mr}, decided by the simulated device.
 *
 * <p>A null MR (the model's null MR: an lkey of the PD, no rkey) is known to the data path ({@link Completions}) by
 * its lkey: its ranges start at {@link ProcessMemory#DISCARD_BASE}, so what a request reads through it is zeros and
 * what is written through it goes nowhere, as mlx5's dump-fill mkey does.
 *
 * <p>{@code ibv_reg_dmabuf_mr}, in the order of the real stack: the provider's op (rdma-core 44: libmlx5 and libefa
 * have {@code reg_dmabuf_mr}; for the others, a profile without a dma-buf rule or with
 * {@link ProviderRule#DMABUF_MR_NOT_IN_PROVIDER}, libibverbs answers EOPNOTSUPP before anything else); then the
 * model's checks of the kernel (access flags, the page offsets of offset and iova); then the fd, which the library
 * looked at in the process: no open file is EBADF and a file that is not a dma-buf EINVAL, as {@code dma_buf_get}
 * answers ({@code ib_umem_dmabuf_get}, drivers/infiniband/core/umem_dmabuf.c). A real dma-buf is refused with
 * EOPNOTSUPP: the memory behind it (a GPU's, udmabuf's) is outside the model.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
final class MrKindVerbs
{
    static final int OP_ALLOC_NULL_MR = 84;
    static final int OP_REG_DMABUF_MR = 85;
    /** {@code struct wire_reg_dmabuf_mr}: the call site follows it. */
    private static final int REG_DMABUF_MR_BYTES = 40;
    /** {@code enum wire_dmabuf_fd}. */
    private static final int FD_DMABUF = 0;
    private static final int FD_CLOSED = 1;
    /** An fd no dma-buf of the model has: the model's checks run up to its fd lookup. */
    private static final int NO_MODEL_FD = -1;

    private final Session s;

    MrKindVerbs(final Session session)
    {
        this.s = session;
    }

    /** @return true for an MR of {@code ibv_alloc_null_mr} (length SIZE_MAX, no rkey). */
    static boolean isNullMr(final Session.MrInfo m)
    {
        return m.lengthBytes() == -1L && m.mr().rkey() == 0;
    }

    /**
     * @param op a request of this class.
     * @param p  its payload.
     * @return the answer (wire_mr_resp).
     * @throws VerbsException the model's errno.
     */
    ByteBuffer call(final int op, final ByteBuffer p)
    {
        return op == OP_ALLOC_NULL_MR ? allocNullMr(p) : regDmabufMr(p);
    }

    private static String site(final ByteBuffer p, final int from)
    {
        final byte[] b = new byte[Math.max(0, p.limit() - from)];
        p.get(from, b);
        return b.length == 0 ? null : new String(b, StandardCharsets.UTF_8);
    }

    private ByteBuffer allocNullMr(final ByteBuffer p)
    {
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final MemoryRegion mr = pd.allocNullMr();
        return adopt(pd, mr, 0, -1L, 0, site(p, 8));
    }

    private ByteBuffer regDmabufMr(final ByteBuffer p)
    {
        final String verb = "ibv_reg_dmabuf_mr";
        final ProtectionDomain pd = s.get(p.getInt(0), ProtectionDomain.class);
        final int accessBits = p.getInt(4);
        final int fdKind = p.getInt(8);
        final int fd = p.getInt(12);
        final long offset = p.getLong(16);
        final long length = p.getLong(24);
        final long iova = p.getLong(32);
        final DeviceProfile profile = ((SimPd) pd).context().device().profile();
        if (!(profile.follows(ProviderRule.DMABUF_DYNAMIC) || profile.follows(ProviderRule.DMABUF_PINNED))
            || profile.follows(ProviderRule.DMABUF_MR_NOT_IN_PROVIDER))
        {
            throw new VerbsException(verb, Errno.EOPNOTSUPP.code(), profile.name() + " (" + profile.driver()
                + "): its rdma-core 44 provider has no reg_dmabuf_mr, so libibverbs answers EOPNOTSUPP (of the "
                + "distribution's providers only mlx5 and efa register dma-bufs); register host memory with "
                + "ibv_reg_mr");
        }
        try
        {
            pd.regDmabufMr(offset, length, iova, NO_MODEL_FD, Access.fromBits(accessBits));
        }
        catch (final VerbsException e)
        {
            if (e.errno() != Errno.EBADF.code())
            {
                throw e; // a check before the fd's: access, page offsets
            }
        }
        if (fdKind == FD_CLOSED)
        {
            throw new VerbsException(verb, Errno.EBADF.code(), "fd " + fd + " is not an open file of the process "
                + "(dma_buf_get: fget fails); pass the fd of the dma-buf you exported");
        }
        if (fdKind != FD_DMABUF)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "fd " + fd + " is an open file but not a dma-buf "
                + "(dma_buf_get: is_dma_buf_file is false); pass the fd of a dma-buf exported by a GPU driver or "
                + "udmabuf");
        }
        throw new VerbsException(verb, Errno.EOPNOTSUPP.code(), "fd " + fd + " is a real dma-buf: the memory behind "
            + "it (a GPU's, udmabuf's) is outside what rnic-sim models, so it cannot be registered; register host "
            + "memory with ibv_reg_mr, or model GPU memory with the Java API's SimGpu dma-bufs");
    }

    private ByteBuffer adopt(final ProtectionDomain pd, final MemoryRegion mr, final long addr, final long length,
        final long iova, final String site)
    {
        final int deviceIndex = s.server.devices.indexOf(((SimPd) pd).context().device());
        final int h = s.add(null);
        final Session.MrInfo info = new Session.MrInfo(s, h, mr, deviceIndex, addr, length, iova, site);
        s.handles.set(h, info);
        s.server.mrs.put(Verbs.mrKey(deviceIndex, mr.lkey()), info);
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(0, h).putInt(4, mr.lkey())
            .putInt(8, mr.rkey());
    }
}
