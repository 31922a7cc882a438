package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * An rdma-core memory region ({@code struct ibv_mr}). Address, length and keys are copied from the native struct
 * after registration and after each {@code ibv_rereg_mr} (which updates it), so that they can still be read once
 * the MR is deregistered and libibverbs has freed the struct; the iova and the rights are kept here (the struct has
 * neither).
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaMr implements MemoryRegion
{
    private final MemorySegment mr;
    private RdmaPd pd;
    private long iova;
    private EnumSet<Access> access;
    private long addr;
    private long lengthBytes;
    private int lkey;
    private int rkey;
    private boolean closed;

    RdmaMr(final RdmaPd pd, final MemorySegment mr, final long iova, final EnumSet<Access> access)
    {
        this.pd = pd;
        this.mr = mr;
        this.iova = iova;
        this.access = access;
        copyFromNative();
    }

    private void copyFromNative()
    {
        addr = mr.get(ADDRESS, IbvStructs.MR_ADDR).address();
        lengthBytes = mr.get(JAVA_LONG, IbvStructs.MR_LENGTH);
        lkey = mr.get(JAVA_INT, IbvStructs.MR_LKEY);
        rkey = mr.get(JAVA_INT, IbvStructs.MR_RKEY);
    }

    @Override
    public ProtectionDomain pd()
    {
        return pd;
    }

    @Override
    public long addr()
    {
        return addr;
    }

    @Override
    public long lengthBytes()
    {
        return lengthBytes;
    }

    @Override
    public long iova()
    {
        return iova;
    }

    @Override
    public int lkey()
    {
        return lkey;
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

    /**
     * {@code ibv_rereg_mr} (ibv_rereg_mr(3)): the library checks the input (ERR_INPUT, the MR unchanged), the
     * kernel the rest (ERR_CMD: the MR must not be used any more, only deregistered). After CHANGE_TRANSLATION the
     * iova is the new address, as ibv_rereg_mr passes it as the new {@code hca_va}.
     *
     * @throws ReregException the library's code (ERR_INPUT, ERR_CMD, or -2, -3, -5 for the fork-protection codes)
     *                        with errno; ERR_INPUT EINVAL for a closed MR, null flags or null elements (checked
     *                        here, as the library would refuse a freed MR); ERR_CMD EINVAL for a PD that is not an
     *                        open PD of this context (checked here: its handle would be unknown to the kernel).
     */
    @Override
    public void rereg(final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLengthBytes, final Set<Access> newAccess)
    {
        // A null access set is no access given, as for the simulated MR (used without CHANGE_ACCESS).
        final Set<Access> accessGiven = newAccess == null ? Set.of() : newAccess;
        if (closed || flags == null || RdmaPd.hasNull(flags) || RdmaPd.hasNull(accessGiven))
        {
            throw new ReregException(Errno.EINVAL.code(), ReregException.ERR_INPUT, closed ? "the MR is deregistered"
                : "flags and access must be sets without null elements");
        }
        final boolean changePd = flags.contains(ReregFlag.CHANGE_PD);
        RdmaPd target = null;
        if (changePd)
        {
            if (!(newPd instanceof RdmaPd p) || p.context() != pd.context() || p.isClosed())
            {
                throw new ReregException(Errno.EINVAL.code(), ReregException.ERR_CMD, "CHANGE_PD to " + newPd
                    + ": not an open PD of this MR's context");
            }
            target = p;
        }
        final int bits = Access.toBits(accessGiven);
        final Errnos.Result r = pd.context().lib().registration().reregMr(mr, ReregFlag.toBits(flags),
            target == null ? MemorySegment.NULL : target.segment(), newAddr, newLengthBytes, bits);
        final int rc = (int)r.value();
        if (rc == 0 || rc == Ibv.IBV_REREG_MR_ERR_DO_FORK_OLD)
        {
            copyFromNative();
            if (flags.contains(ReregFlag.CHANGE_TRANSLATION))
            {
                iova = newAddr;
            }
            if (flags.contains(ReregFlag.CHANGE_ACCESS))
            {
                access = accessGiven.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(accessGiven);
            }
            if (target != null && target != pd)
            {
                pd.mrClosed(this);
                target.mrMovedHere(this);
                pd = target;
            }
        }
        if (rc != 0)
        {
            final int errno = r.errno() != 0 ? r.errno() : Errno.EINVAL.code();
            throw new ReregException(errno, rc, "flags=" + flags + " addr=0x" + Long.toHexString(newAddr)
                + " length=" + newLengthBytes + " access=" + newAccess + ": " + switch (rc)
                {
                    case Ibv.IBV_REREG_MR_ERR_INPUT -> "libibverbs refused the input; the MR is unchanged";
                    case Ibv.IBV_REREG_MR_ERR_DONT_FORK_NEW -> "fork protection of the new range failed; the MR is "
                        + "unchanged";
                    case Ibv.IBV_REREG_MR_ERR_DO_FORK_OLD -> "the MR was changed, but releasing fork protection of the "
                        + "old range failed";
                    case Ibv.IBV_REREG_MR_ERR_CMD -> "the kernel refused; the MR must not be used any more, only "
                        + "deregistered";
                    default -> "the kernel refused and fork protection of the new range is inconsistent; the MR must "
                        + "only be deregistered";
                });
        }
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_dereg_mr}. Idempotent.
     *
     * @throws VerbsException the errno (EBUSY or EINVAL while windows are bound to it): the MR stays registered.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = pd.context().lib().registration().deregMr(mr);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_dereg_mr", r.errno(), "MR lkey=0x" + Integer.toHexString(lkey())
                + " stays registered (memory windows still bound to it?)");
        }
        closed = true;
        pd.mrClosed(this);
    }

    MemorySegment segment()
    {
        return mr;
    }

    /**
     * @return the {@code pd} member of the native MR, as verbs.h's ibv_bind_mw compares it.
     */
    long nativePd()
    {
        return mr.get(ADDRESS, IbvStructs.MR_PD).address();
    }

    @Override
    public String toString()
    {
        return closed ? "RdmaMr[deregistered]" : "RdmaMr[addr=0x" + Long.toHexString(addr()) + " length="
            + lengthBytes() + " iova=0x" + Long.toHexString(iova) + " lkey=0x" + Integer.toHexString(lkey())
            + " rkey=0x" + Integer.toHexString(rkey()) + " access=" + access + "]";
    }
}
