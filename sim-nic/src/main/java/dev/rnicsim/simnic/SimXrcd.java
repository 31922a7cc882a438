package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.XrcDomain;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A simulated XRC domain ({@code ibv_open_xrcd} with fd -1): the XRC SRQs and XRC_RECV QPs created in it. A message on
 * an XRC_RECV QP may go to an XRC SRQ of the same domain only ({@link XrcRules#route}). Each SRQ and target QP keeps
 * the domain busy (the kernel raises {@code xrcd->usecnt} for both and {@code ib_dealloc_xrcd_user} answers EBUSY while
 * it is not 0). An XRC_RECV QP has no PD of its own (the kernel's {@code create_xrc_qp_user} leaves {@code qp->pd}
 * NULL); until a message names an XRC SRQ it carries the domain's placeholder PD, which no key belongs to. Not thread
 * safe.
 */
public final class SimXrcd implements XrcDomain
{
    private final SimContext context;
    private final SimPd placeholder;
    private final Set<SimSrq> srqs = new LinkedHashSet<>();
    private final Set<SimQp> targets = new LinkedHashSet<>();
    private boolean closed;

    SimXrcd(final SimContext context)
    {
        this.context = context;
        // A PD number of the device that no MR, window or key is ever registered under.
        this.placeholder = new SimPd(context, context.device().allocPdNum());
    }

    @Override
    public SimContext context()
    {
        return context;
    }

    SimPd placeholderPd()
    {
        return placeholder;
    }

    void srqCreated(final SimSrq srq)
    {
        srqs.add(srq);
    }

    void srqClosed(final SimSrq srq)
    {
        srqs.remove(srq);
    }

    void targetCreated(final SimQp qp)
    {
        targets.add(qp);
    }

    void targetClosed(final SimQp qp)
    {
        targets.remove(qp);
    }

    /**
     * @return the live XRC_RECV QPs of the domain.
     */
    public List<SimQp> targetQps()
    {
        return new ArrayList<>(targets);
    }

    /**
     * @return the live XRC SRQs of the domain.
     */
    public List<SimSrq> srqs()
    {
        return new ArrayList<>(srqs);
    }

    /**
     * @param srqNum an SRQ number.
     * @return the live XRC SRQ of this domain with that number, or null.
     */
    SimSrq srq(final int srqNum)
    {
        for (final SimSrq s : srqs)
        {
            if (s.srqNum() == srqNum)
            {
                return s;
            }
        }
        return null;
    }

    @Override
    public boolean isClosed()
    {
        return closed;
    }

    /**
     * {@code ibv_close_xrcd}: EBUSY while an XRC SRQ or XRC_RECV QP of the domain lives (kernel
     * {@code ib_dealloc_xrcd_user}); nothing changes then.
     */
    @Override
    public void close()
    {
        context.device().fabric().guardedRun(this::closeDomain);
    }

    private void closeDomain()
    {
        if (closed)
        {
            return;
        }
        if (!srqs.isEmpty() || !targets.isEmpty())
        {
            throw Errors.of("ibv_close_xrcd", Errno.EBUSY, "the XRC domain still has " + srqs.size()
                + " XRC SRQ(s) and " + targets.size() + " XRC_RECV QP(s) (ib_dealloc_xrcd_user refuses a domain "
                + "whose use count is not 0); destroy them first; nothing changed");
        }
        closed = true;
        context.xrcdClosed(this);
    }

    /** Closes the domain's XRC_RECV QPs (its SRQs close with their PDs), then the domain: the context is closing. */
    void closeAll()
    {
        final RuntimeException failure = Closing.each(List.copyOf(targets), SimQp::close, null);
        if (failure != null)
        {
            throw failure;
        }
    }

    @Override
    public String toString()
    {
        return "XRCD[srqs=" + srqs.size() + " xrc_recv_qps=" + targets.size() + (closed ? " closed" : "") + "]";
    }
}
