package dev.rnicsim.simnic;

import dev.rnicsim.verbs.AddressHandle;
import dev.rnicsim.verbs.AhAttr;

/**
 * A simulated address handle: the address vector a UD send names. It keeps its PD busy until destroyed. Not thread
 * safe.
 */
public final class SimAh implements AddressHandle
{
    private final SimPd pd;
    private final AhAttr attr;
    private boolean closed;

    private SimAh(final SimPd pd, final AhAttr attr)
    {
        this.pd = pd;
        this.attr = attr;
    }

    /**
     * {@code ibv_create_ah}: EOPNOTSUPP on an iWARP device (siw, cxgb4, erdma and irdma in iWARP mode register no
     * {@code create_user_ah}: the kernel's {@code ib_uverbs_create_ah}); EINVAL for a port outside the device's or,
     * on RoCE, an address without a GID ({@link QpAttributes#ahRefusal}).
     */
    static SimAh create(final SimPd pd, final AhAttr attr)
    {
        if (attr == null)
        {
            throw Errors.invalid("ibv_create_ah", "ah_attr is null; give the address vector (port, "
                + "destination LID or GID)");
        }
        final SimDevice device = pd.context().device();
        if (device.profile().traits().transport() == DriverTraits.Transport.IWARP)
        {
            throw Errors.of("ibv_create_ah", dev.rnicsim.verbs.Errno.EOPNOTSUPP, device.name() + " is an iWARP device ("
                + device.profile().driver() + "): its driver has no create_ah (the kernel's ib_uverbs_create_ah answers "
                + "-EOPNOTSUPP for a device without create_user_ah; iWARP has RC QPs only, which take no address "
                + "handle); use an RC QP, or a RoCE or InfiniBand device for UD; nothing was created");
        }
        final String refused = QpAttributes.ahRefusal(device, attr);
        if (refused != null)
        {
            throw Errors.invalid("ibv_create_ah", refused + "; fix the address vector (ah_attr); nothing was created");
        }
        final int valid = QpAttributes.emptySgidValidEntries(pd.context().device(), attr);
        if (valid >= 0)
        {
            throw Errors.of("ibv_create_ah", dev.rnicsim.verbs.Errno.ENODATA, "sgid_index=" + attr.sgidIndex()
                + " names an empty entry of port " + attr.portNum() + "'s GID table, which holds " + valid
                + " valid entries (rdma_get_gid_attr" + QpAttributes.noIpv4Note(pd.context().device()) + "); give an "
                + "index ibv_query_gid_ex answers, 0 to " + (valid - 1) + "; nothing was created");
        }
        return new SimAh(pd, attr);
    }

    @Override
    public SimPd pd()
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

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            pd.ahClosed(this);
        }
    }

    @Override
    public String toString()
    {
        return "AH[" + attr.dgid() + " port " + attr.portNum() + "]";
    }
}
