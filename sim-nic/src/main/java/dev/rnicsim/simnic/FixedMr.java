package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.MemoryRegion;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.ReregException;
import dev.rnicsim.verbs.ReregFlag;
import java.util.EnumSet;
import java.util.Set;

/**
 * What the simulated MRs that pin no host memory (ODP MRs, MRs over GPU memory) share: a PD, a range and keys fixed
 * at registration, since the model does not rereg them.
 *
 * <p>Not thread safe.
 */
abstract class FixedMr implements MemoryRegion
{
    final SimPd pd;
    final long addr;
    final long lengthBytes;
    final long iova;
    final int lkey;
    final int rkey;
    final EnumSet<Access> access;
    boolean closed;

    FixedMr(final SimPd pd, final long addr, final long lengthBytes, final long iova, final int lkey,
        final int rkey, final Set<Access> access)
    {
        this.pd = pd;
        this.addr = addr;
        this.lengthBytes = lengthBytes;
        this.iova = iova;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
    }

    @Override
    public SimPd pd()
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
        return access.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(access);
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * @return what kind of MR this is, for messages ("an ODP MR", ...).
     */
    abstract String kindName();

    /**
     * @throws ReregException always: ERR_CMD with EOPNOTSUPP (the model does not rereg these MRs).
     */
    @Override
    public void rereg(final Set<ReregFlag> flags, final ProtectionDomain newPd, final long newAddr,
        final long newLengthBytes, final Set<Access> newAccess)
    {
        throw new ReregException(Errno.EOPNOTSUPP.code(), ReregException.ERR_CMD, "ibv_rereg_mr of " + kindName()
            + " is not simulated; deregister and register again");
    }
}
