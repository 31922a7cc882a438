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
     * {@code ibv_create_ah}: EINVAL for a port outside the device's or, on RoCE, an address without a GID
     * ({@link QpAttributes#ahRefusal}).
     */
    static SimAh create(final SimPd pd, final AhAttr attr)
    {
        if (attr == null)
        {
            throw Errors.invalid("ibv_create_ah", "ah_attr is null; give the address vector (port, "
                + "destination LID or GID)");
        }
        final String refused = QpAttributes.ahRefusal(pd.context().device(), attr);
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
