package dev.rnicsim.hwnic;

import static dev.rnicsim.hwnic.Downcalls.extendedOp;
import static dev.rnicsim.hwnic.Downcalls.pointerHandle;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.DmAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.EnumSet;
import java.util.Set;

/**
 * rdma-core device memory ({@code struct ibv_dm}, ibv_alloc_dm(3)). {@code ibv_alloc_dm}, {@code ibv_free_dm} and
 * {@code ibv_reg_dm_mr} are inline in verbs.h as calls through the extended table ({@code verbs_get_ctx_op}: a
 * provider without the entry answers EOPNOTSUPP without a call); {@code ibv_memcpy_to_dm} and
 * {@code ibv_memcpy_from_dm} call the struct's own function pointers, which return the errno (mlx5: EFAULT for a
 * range past the allocation, EINVAL for an offset or length not a multiple of 4).
 *
 * <p>Freed with {@link #close()}, or by the kernel with its context: once the context is closed the struct is gone
 * and this object answers as freed device memory (EINVAL), without calling.
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
final class RdmaDm implements DeviceMemory
{
    /** {@code struct ibv_alloc_dm_attr}. */
    static final StructLayout IBV_ALLOC_DM_ATTR = MemoryLayout.structLayout(JAVA_LONG.withName("length"),
        JAVA_INT.withName("log_align_req"), JAVA_INT.withName("comp_mask")).withName("ibv_alloc_dm_attr");
    /** {@code struct ibv_dm}: the context, the two copy functions, comp_mask and the kernel's handle. */
    static final StructLayout IBV_DM = MemoryLayout.structLayout(ADDRESS.withName("context"),
        ADDRESS.withName("memcpy_to_dm"), ADDRESS.withName("memcpy_from_dm"), JAVA_INT.withName("comp_mask"),
        JAVA_INT.withName("handle")).withName("ibv_dm");

    private static final long OP_ALLOC_DM = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "alloc_dm");
    private static final long OP_FREE_DM = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "free_dm");
    private static final long OP_REG_DM_MR = IbvStructs.offset(IbvStructs.VERBS_CONTEXT, "reg_dm_mr");
    private static final long DM_MEMCPY_TO = IbvStructs.offset(IBV_DM, "memcpy_to_dm");
    private static final long DM_MEMCPY_FROM = IbvStructs.offset(IBV_DM, "memcpy_from_dm");

    private static final MethodHandle ALLOC = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle FREE = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle MEMCPY_TO = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG,
        ADDRESS, JAVA_LONG));
    private static final MethodHandle MEMCPY_FROM = pointerHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS,
        JAVA_LONG, JAVA_LONG));
    private static final MethodHandle REG_DM_MR = pointerHandle(FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS,
        JAVA_LONG, JAVA_LONG, JAVA_INT));

    private final RdmaContext context;
    private final MemorySegment dm;
    private final long lengthBytes;
    private boolean closed;

    private RdmaDm(final RdmaContext context, final MemorySegment dm, final long lengthBytes)
    {
        this.context = context;
        this.dm = dm;
        this.lengthBytes = lengthBytes;
    }

    /**
     * {@code ibv_alloc_dm(context, attr)}.
     *
     * @throws VerbsException the provider's errno: EOPNOTSUPP without device memory, EINVAL for a length above
     *                        max_dm_size or a comp_mask (mlx5), ENOMEM when no free range is long enough.
     */
    static RdmaDm allocate(final RdmaContext context, final DmAttr attr)
    {
        final String verb = "ibv_alloc_dm";
        context.checkOpen(verb);
        final MemorySegment fn = extendedOp(context.segment(), OP_ALLOC_DM);
        if (fn.address() == 0)
        {
            throw new VerbsException(verb, Errno.EOPNOTSUPP.code(), context.device().name() + ": the provider has "
                + "no alloc_dm (no device memory)");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment a = arena.allocate(IBV_ALLOC_DM_ATTR);
            a.set(JAVA_LONG, 0, attr.lengthBytes());
            a.set(JAVA_INT, 8, attr.logAlignReq());
            a.set(JAVA_INT, 12, attr.compMask());
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment got = (MemorySegment)ALLOC.invokeExact(fn, state, context.segment(), a);
            if (got.address() == 0)
            {
                final int errno = Errnos.read(state);
                throw new VerbsException(verb, errno, "length " + Long.toUnsignedString(attr.lengthBytes())
                    + " log_align_req " + attr.logAlignReq() + " comp_mask 0x" + Integer.toHexString(attr.compMask())
                    + (Errno.of(errno) == Errno.ENOMEM ? ": no free range of device memory is long enough; free "
                    + "device memory first" : Errno.of(errno) == Errno.EINVAL ? ": the length must be 1 to "
                    + "max_dm_size and comp_mask 0" : ""));
            }
            return new RdmaDm(context, got.reinterpret(IBV_DM.byteSize()), attr.lengthBytes());
        }
        catch (final VerbsException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    @Override
    public long lengthBytes()
    {
        return lengthBytes;
    }

    /** EINVAL for freed device memory, or device memory of a closed context (the kernel freed it). */
    private void checkLive(final String verb)
    {
        if (isClosed())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the device memory is freed (ibv_free_dm, or its "
                + "context closed); allocate device memory again");
        }
    }

    @Override
    public void memcpyTo(final long dmOffset, final byte[] src)
    {
        final String verb = "ibv_memcpy_to_dm";
        checkLive(verb);
        if (src == null)
        {
            throw new VerbsException(verb, Errno.EFAULT.code(), "src is null; pass the bytes to copy");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment host = arena.allocate(Math.max(1, src.length));
            MemorySegment.copy(src, 0, host, JAVA_BYTE, 0, src.length);
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)MEMCPY_TO.invokeExact(dm.get(ADDRESS, DM_MEMCPY_TO), state, dm, dmOffset, host,
                (long)src.length);
            check(verb, rc, dmOffset, src.length);
        }
        catch (final VerbsException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    @Override
    public byte[] memcpyFrom(final long dmOffset, final int length)
    {
        final String verb = "ibv_memcpy_from_dm";
        checkLive(verb);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment host = arena.allocate(Math.max(1, length));
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)MEMCPY_FROM.invokeExact(dm.get(ADDRESS, DM_MEMCPY_FROM), state, host, dm, dmOffset,
                (long)length);
            check(verb, rc, dmOffset, length);
            return host.asSlice(0, length).toArray(JAVA_BYTE);
        }
        catch (final VerbsException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    private void check(final String verb, final int rc, final long dmOffset, final long length)
    {
        if (rc != 0)
        {
            throw new VerbsException(verb, rc, "range " + Long.toUnsignedString(dmOffset) + "+" + length + " of "
                + lengthBytes + " bytes of device memory" + switch (Errno.of(rc))
                {
                    case EFAULT -> ": past the allocation; keep the range inside it";
                    case EINVAL -> ": the offset and length must be multiples of the provider's copy unit (4 bytes "
                        + "on mlx5)";
                    default -> "";
                });
        }
    }

    /**
     * {@code ibv_reg_dm_mr(pd, dm, dm_offset, length, access)}.
     *
     * @throws VerbsException EINVAL for device memory that is not this PD's context's or is freed, without ZERO_BASED
     *                        (libibverbs' ibv_cmd_reg_dm_mr) or for a range outside the device memory (the kernel);
     *                        EOPNOTSUPP when the provider has no reg_dm_mr.
     */
    static RdmaMr register(final RdmaPd pd, final DeviceMemory memory, final long dmOffset, final long lengthBytes,
        final Set<Access> access)
    {
        final String verb = "ibv_reg_dm_mr";
        if (!(memory instanceof RdmaDm d) || d.context != pd.context() || d.isClosed())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "dm is not live device memory of this PD's context: "
                + memory + "; pass device memory from ibv_alloc_dm on the same context that is not freed");
        }
        if (access == null || RdmaPd.hasNull(access))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "access must be a set of Access flags, got " + access);
        }
        final MemorySegment fn = extendedOp(pd.context().segment(), OP_REG_DM_MR);
        if (fn.address() == 0)
        {
            throw new VerbsException(verb, Errno.EOPNOTSUPP.code(), "the provider has no reg_dm_mr");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final MemorySegment mr = (MemorySegment)REG_DM_MR.invokeExact(fn, state, pd.segment(), d.dm, dmOffset,
                lengthBytes, Access.toBits(access));
            if (mr.address() == 0)
            {
                throw new VerbsException(verb, Errnos.read(state), "offset " + Long.toUnsignedString(dmOffset)
                    + " length " + Long.toUnsignedString(lengthBytes) + " of " + d.lengthBytes + " bytes, access "
                    + access + ": ZERO_BASED is required, the range must lie inside the device memory, and only "
                    + "LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ and REMOTE_ATOMIC may be given beside it (mlx5)");
            }
            return new RdmaMr(pd, mr.reinterpret(IbvStructs.IBV_MR.byteSize()), 0,
                access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access));
        }
        catch (final VerbsException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    @Override
    public boolean isClosed()
    {
        return closed || context.isClosed();
    }

    /**
     * {@code ibv_free_dm}. Idempotent.
     *
     * @throws VerbsException EBUSY while an MR of ibv_reg_dm_mr uses it (it stays allocated).
     */
    @Override
    public void close()
    {
        if (isClosed())
        {
            closed = true;
            return;
        }
        final String verb = "ibv_free_dm";
        final MemorySegment fn = extendedOp(context.segment(), OP_FREE_DM);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment state = Errnos.state(arena);
            final int rc = (int)FREE.invokeExact(fn, state, dm);
            if (rc != 0)
            {
                throw new VerbsException(verb, rc, this + (Errno.of(rc) == Errno.EBUSY ? ": MRs of ibv_reg_dm_mr "
                    + "still use it; deregister them first" : ""));
            }
            closed = true;
        }
        catch (final VerbsException e)
        {
            throw e;
        }
        catch (final Throwable t)
        {
            throw Errnos.unexpected(verb, t);
        }
    }

    @Override
    public String toString()
    {
        return "RdmaDm[" + lengthBytes + " bytes" + (isClosed() ? ", freed" : "") + "]";
    }
}
