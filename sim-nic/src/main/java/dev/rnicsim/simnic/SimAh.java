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
        final String empty = QpAttributes.emptySgidRefusal(pd.context().device(), attr);
        if (empty != null)
        {
            throw Errors.of("ibv_create_ah", dev.rnicsim.verbs.Errno.ENODATA, empty + "; nothing was created");
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
