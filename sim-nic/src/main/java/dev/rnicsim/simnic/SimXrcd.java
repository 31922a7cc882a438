package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.XrcDomain;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A handle of one context on a simulated XRC domain ({@code ibv_open_xrcd}): the XRC SRQs and XRC_RECV QPs created
 * through it. Opened with fd -1 the domain is the handle's alone; opened with a file it is the one the file's inode
 * names on the device, shared by every handle opened through that inode in any context ({@link XrcdTable}). A
 * message on an XRC_RECV QP may go to an XRC SRQ of the same domain only ({@link XrcRules#route}). Each SRQ and target
 * QP keeps its handle busy (the kernel raises {@code xrcd->usecnt} for both and {@code ib_dealloc_xrcd_user} answers
 * EBUSY while it is not 0). An XRC_RECV QP has no PD of its own (the kernel's {@code create_xrc_qp_user} leaves
 * {@code qp->pd} NULL); until a message names an XRC SRQ it carries the handle's placeholder PD, which no key belongs
 * to. Not thread safe.
 */
public final class SimXrcd implements XrcDomain
{
    private final SimContext context;
    private final XrcdTable.Shared shared;
    private final SimPd placeholder;
    private final Set<SimSrq> srqs = new LinkedHashSet<>();
    private final Set<SimQp> targets = new LinkedHashSet<>();
    private boolean closed;

    SimXrcd(final SimContext context, final XrcdTable.Shared shared)
    {
        this.context = context;
        this.shared = shared;
        // A PD number of the device that no MR, window or key is ever registered under.
        this.placeholder = new SimPd(context, context.device().objects().allocPdNum());
        shared.joined(this);
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
     * @return the file whose inode names the domain, or null when it was opened without one (fd -1).
     */
    public dev.rnicsim.verbs.XrcdFile file()
    {
        return shared.file();
    }

    /**
     * @return how many handles, in every context of the device, are open on the domain this handle opens (the
     *         kernel's {@code xrcd->usecnt} of a domain named by a file); 1 for a domain opened without a file.
     */
    public int handlesOnDomain()
    {
        return shared.handles().size();
    }

    /**
     * @param other another XRC domain handle.
     * @return true when both are handles on one domain (opened through the same inode of the same device).
     */
    public boolean sameDomainAs(final SimXrcd other)
    {
        return other != null && other.shared == shared;
    }

    /**
     * @return the live XRC SRQs of the domain made through every handle on it, in every context.
     */
    List<SimSrq> domainSrqs()
    {
        final List<SimSrq> out = new ArrayList<>();
        for (final SimXrcd h : shared.handles())
        {
            out.addAll(h.srqs);
        }
        return out;
    }

    /**
     * @return the live XRC_RECV QPs of the domain made through every handle on it, in every context.
     */
    List<SimQp> domainTargetQps()
    {
        final List<SimQp> out = new ArrayList<>();
        for (final SimXrcd h : shared.handles())
        {
            out.addAll(h.targets);
        }
        return out;
    }

    /**
     * @param srqNum an SRQ number.
     * @return the live XRC SRQ of this domain with that number (made through any handle on it), or null.
     */
    SimSrq srq(final int srqNum)
    {
        for (final SimSrq s : domainSrqs())
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
     * {@code ibv_close_xrcd}: EBUSY while an XRC SRQ or XRC_RECV QP made through this handle lives (kernel
     * {@code ib_dealloc_xrcd_user}; {@code uverbs_free_xrcd} counts them per handle); nothing changes then. Otherwise
     * the handle goes; a domain named by a file lives on while another handle, of any context, is open on it, and the
     * last close frees it ({@code ib_uverbs_dealloc_xrcd}: {@code xrcd->usecnt}, {@code xrcd_table_delete}).
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
                + " XRC SRQ(s) and " + targets.size() + " XRC_RECV QP(s) made through this handle "
                + "(ib_dealloc_xrcd_user refuses a domain whose use count is not 0; uverbs_free_xrcd a handle whose "
                + "objects live); destroy them first; nothing changed");
        }
        closed = true;
        shared.left(this);
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
