package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An rdma-core address handle ({@code struct ibv_ah}, ibv_create_ah(3)): the path to a remote port that a UD send
 * names in {@code wr.ud.ah}. It belongs to a PD and keeps it busy until destroyed ({@code ibv_dealloc_pd} answers
 * EBUSY meanwhile, the kernel's {@code ib_dealloc_pd_user}).
 *
 * <p>Not thread safe (see {@link RdmaContext}).
 */
public final class RdmaAh implements AddressHandle
{
    /** {@code sizeof(struct ibv_ah)}: context, pd, handle; the binding reads none of its members. */
    private static final long IBV_AH_BYTES = 24;

    private static final long GRH_DGID = IbvStructs.offset(IbvStructs.IBV_AH_ATTR, "grh", "dgid");
    private static final long GRH_SGID_INDEX = IbvStructs.offset(IbvStructs.IBV_AH_ATTR, "grh", "sgid_index");
    private static final long GRH_HOP_LIMIT = IbvStructs.offset(IbvStructs.IBV_AH_ATTR, "grh", "hop_limit");
    private static final long DLID = IbvStructs.offset(IbvStructs.IBV_AH_ATTR, "dlid");
    private static final long IS_GLOBAL = IbvStructs.offset(IbvStructs.IBV_AH_ATTR, "is_global");
    private static final long PORT_NUM = IbvStructs.offset(IbvStructs.IBV_AH_ATTR, "port_num");

    private final RdmaPd pd;
    private final MemorySegment ah;
    private final AhAttr attr;
    private boolean closed;

    private RdmaAh(final RdmaPd pd, final MemorySegment ah, final AhAttr attr)
    {
        this.pd = pd;
        this.ah = ah;
        this.attr = attr;
    }

    /**
     * {@code ibv_create_ah}: the address vector written into a {@code struct ibv_ah_attr}, with a global route
     * header (hop limit {@value GlobalRoute#HOP_LIMIT}) when it names a GID, as RoCE requires.
     *
     * @param pd   the PD.
     * @param attr the address vector.
     * @return the address handle.
     * @throws VerbsException EINVAL for a null attr or a GID that is not one (checked here); otherwise the errno the
     *                        library gave (EINVAL for a port the device lacks or, on RoCE, no GID).
     */
    static RdmaAh create(final RdmaPd pd, final AhAttr attr)
    {
        final String verb = "ibv_create_ah";
        if (attr == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "attr is null");
        }
        try (Arena a = Arena.ofConfined())
        {
            final MemorySegment av = a.allocate(IbvStructs.IBV_AH_ATTR);
            av.set(JAVA_SHORT, DLID, (short)attr.dlid());
            av.set(JAVA_BYTE, PORT_NUM, (byte)attr.portNum());
            if (attr.isGlobal())
            {
                av.set(JAVA_BYTE, IS_GLOBAL, (byte)1);
                MemorySegment.copy(GlobalRoute.gidBytes(attr.dgid()), 0, av, JAVA_BYTE, GRH_DGID, 16);
                av.set(JAVA_BYTE, GRH_SGID_INDEX, (byte)attr.sgidIndex());
                av.set(JAVA_BYTE, GRH_HOP_LIMIT, (byte)GlobalRoute.HOP_LIMIT);
            }
            final Errnos.Result r = pd.context().lib().addressHandles().createAh(pd.segment(), av);
            if (r.isNull())
            {
                throw new VerbsException(verb, r.errno(), pd.context().device().name() + ": " + attr + " (ports 1 to "
                    + "phys_port_cnt " + pd.context().attributes().physPortCnt() + "; on RoCE the address needs a "
                    + "GID)");
            }
            return new RdmaAh(pd, r.pointer(IBV_AH_BYTES), attr);
        }
    }

    @Override
    public RdmaPd pd()
    {
        return pd;
    }

    @Override
    public AhAttr attr()
    {
        return attr;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_destroy_ah}. Idempotent.
     *
     * @throws VerbsException the errno the library gave; the address handle stays.
     */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        final Errnos.Result r = pd.context().lib().addressHandles().destroyAh(ah);
        if (r.value() != 0)
        {
            throw new VerbsException("ibv_destroy_ah", r.errno(), "the address handle to " + attr + " stays");
        }
        closed = true;
        pd.ahClosed(this);
    }

    MemorySegment segment()
    {
        return ah;
    }

    @Override
    public String toString()
    {
        return "RdmaAh[" + attr + (closed ? ", destroyed" : "") + "]";
    }
}
