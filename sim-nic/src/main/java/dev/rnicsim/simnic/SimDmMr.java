package dev.rnicsim.simnic;

import dev.rnicsim.mtt.TableException;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.DeviceMemory;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import java.util.EnumSet;
import java.util.Set;

/**
 * An MR over device memory ({@code ibv_reg_dm_mr}): zero-based, its translation the device memory's frames. Not a
 * plain MR: {@code ibv_rereg_mr} refuses it (IBV_REREG_MR_ERR_INPUT, EINVAL) and so does mlx5's {@code ibv_bind_mw}
 * (EOPNOTSUPP). The rules: mlx5 {@code mlx5_reg_dm_mr} (access limited to LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ,
 * REMOTE_ATOMIC and ZERO_BASED, which is required: ibv_alloc_dm(3)), the kernel's {@code ib_uverbs_reg_dm_mr} (the
 * range inside the device memory, else EINVAL) and {@code ib_check_mr_access} (the LOCAL_WRITE dependency).
 *
 * <p>What the tables hold: an MPT entry with its keys like any MR, whose MTT entries are the pages of the device's
 * own memory ({@link SimDm.Space}) covering the range, not host pages: nothing of the process is pinned or charged
 * to RLIMIT_MEMLOCK, and no page walk happens. The MPT's start is the range's offset within its first page, so that
 * the zero-based iova 0 is the range's first byte ({@code mlx5_ib_reg_dm_mr} registers the MEMIC physical range
 * with a zero-based mkey). An MR of length 0 (the kernel takes it) holds an MPT entry over one byte, as the tables
 * keep no empty range: a one-byte request at iova 0 then passes its key check, where mlx5 would refuse it; every
 * longer one fails as on the device. The cost model prices DMA to and from it as to host memory: no published figure for
 * MEMIC access latency was found, so none is invented.
 *
 * <p>Not thread safe.
 */
final class SimDmMr implements MemoryRegion
{
    private static final Set<Access> ALLOWED = EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE,
        Access.REMOTE_READ, Access.REMOTE_ATOMIC, Access.ZERO_BASED);
    private static final Set<Access> REMOTE = EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ,
        Access.REMOTE_ATOMIC);

    private final SimPd pd;
    private final SimDm dm;
    private final long lengthBytes;
    private final int key;
    private final int rkey;
    private final EnumSet<Access> access;
    private boolean closed;

    private SimDmMr(final SimPd pd, final SimDm dm, final long lengthBytes, final int key, final int rkey,
        final EnumSet<Access> access)
    {
        this.pd = pd;
        this.dm = dm;
        this.lengthBytes = lengthBytes;
        this.key = key;
        this.rkey = rkey;
        this.access = access;
    }

    /** ibv_reg_dm_mr; nothing changes on failure. */
    static SimDmMr register(final SimPd pd, final DeviceMemory memory, final long dmOffset, final long lengthBytes,
        final Set<Access> access)
    {
        final String verb = "ibv_reg_dm_mr";
        final SimDevice device = pd.context().device();
        if (device.profile().maxDmSizeBytes() == 0)
        {
            throw Errors.of(verb, Errno.EOPNOTSUPP, device.profile().name() + " has no device memory"
                + " (max_dm_size 0); use a device with max_dm_size above 0 (mlx5)");
        }
        if (!(memory instanceof SimDm dm) || dm.isClosed() || dm.context().device() != device)
        {
            throw Errors.invalid(verb, "dm is not live device memory of this device: " + memory
                + " (ib_uverbs_reg_dm_mr); pass device memory from ibv_alloc_dm on this device that is not freed");
        }
        if (access == null || access.contains(null))
        {
            throw Errors.invalid(verb, "access must be a set of Access flags");
        }
        final EnumSet<Access> rights = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
        if (!rights.contains(Access.ZERO_BASED))
        {
            throw Errors.invalid(verb, "access " + rights + " lacks ZERO_BASED: an MR over device memory is "
                + "addressed by offsets (ibv_alloc_dm(3))"
                + "; add ZERO_BASED to the access flags");
        }
        if (!ALLOWED.containsAll(rights))
        {
            throw Errors.invalid(verb, "access " + rights + ": only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, "
                + "REMOTE_ATOMIC and ZERO_BASED are allowed on device memory (mlx5_reg_dm_mr)"
                + "; drop the other flags");
        }
        Access.checkDependencies(rights, verb);
        // UVERBS_METHOD_DM_MR_REG checks only that the range lies inside the DM: a length of 0 is an MR (rdma-core
        // tests/test_mr.py test_create_dm_mr registers one)
        if (dmOffset < 0 || lengthBytes < 0 || dmOffset > dm.lengthBytes() || lengthBytes > dm.lengthBytes() - dmOffset)
        {
            throw Errors.invalid(verb, "range " + Long.toUnsignedString(dmOffset) + "+"
                + Long.toUnsignedString(lengthBytes) + " is not inside the "
                + dm.lengthBytes() + " bytes of device memory (ib_uverbs_reg_dm_mr)"
                + "; register a range inside the allocation");
        }
        // the tables hold no empty range: an MR of length 0 gets an entry over the DM's first byte (class comment)
        final long first = lengthBytes == 0 ? dm.start() : dm.start() + dmOffset;
        final long tableLength = Math.max(1, lengthBytes);
        final long tableIova = first & 0xfff;
        final int key;
        try
        {
            key = device.tables().register(pd.pdNum(), device.deviceMemory().pageRuns(first, tableLength), first,
                tableLength, tableIova, Access.toBits(rights) & ~Access.ZERO_BASED.bit()).key();
        }
        catch (final TableException e)
        {
            throw Errors.of(verb, e);
        }
        if (tableIova != 0)
        {
            device.keys().zeroBased(key, tableIova);
        }
        pd.userAdded(1);
        final int rkey = device.profile().rkeyOnlyWithRemoteAccess() && rights.stream().noneMatch(REMOTE::contains)
            ? 0 : key;
        final SimDmMr mr = new SimDmMr(pd, dm, lengthBytes, key, rkey, rights);
        dm.mrAdded(mr);
        return mr;
    }

    @Override
    public SimPd pd()
    {
        return pd;
    }

    /** @return 0: addresses are offsets into the MR. */
    @Override
    public long addr()
    {
        return 0;
    }

    @Override
    public long lengthBytes()
    {
        return lengthBytes;
    }

    @Override
    public long iova()
    {
        return 0;
    }

    @Override
    public int lkey()
    {
        return key;
    }

    @Override
    public int rkey()
    {
        return rkey;
    }

    @Override
    public EnumSet<Access> access()
    {
        return EnumSet.copyOf(access);
    }

    /** @throws ReregException always: ERR_INPUT with EINVAL (libibverbs takes only plain MRs). */
    @Override
    public void rereg(final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLengthBytes, final Set<Access> newAccess)
    {
        throw new ReregException(Errno.EINVAL.code(), ReregException.ERR_INPUT, "an MR over device memory cannot be "
            + "reregistered: only plain MRs can (ibv_rereg_mr)"
            + "; deregister it and register again");
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        pd.context().device().fabric().guardedRun(this::deregister);
    }

    private void deregister()
    {
        if (closed)
        {
            return;
        }
        final SimDevice device = pd.context().device();
        device.tables().deregister(key);
        device.keys().forgetZeroBased(key);
        dm.mrRemoved(this);
        pd.userAdded(-1);
        closed = true;
    }
}
