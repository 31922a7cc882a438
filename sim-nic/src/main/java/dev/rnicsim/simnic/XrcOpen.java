package dev.rnicsim.simnic;

import dev.rnicsim.verbs.Context;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.XrcDomain;

/**
 * {@code ibv_open_qp} (ibv_open_qp(3)): a process opens an XRC target QP (IBV_QPT_XRC_RECV) that any process made in
 * the same XRC domain, by its number, and may then modify, query and close it. The rules, in the kernel's order
 * ({@code ib_uverbs_open_qp} in drivers/infiniband/core/uverbs_cmd.c, {@code ib_open_qp} in
 * drivers/infiniband/core/verbs.c); the provider's checks of the attribute mask come before, in the library:
 * <ul>
 * <li>a device without XRC: its provider has no {@code open_qp} (rdma-core 44: mlx4, mlx5 and hns have one),
 * libibverbs' stand-in answers EOPNOTSUPP;</li>
 * <li>the XRC domain handle must be a live one of the caller's context (the kernel looks it up among the caller's
 * objects: EINVAL);</li>
 * <li>qp_type must be IBV_QPT_XRC_RECV (IB_QPT_XRC_TGT; EINVAL);</li>
 * <li>qp_num must name a live XRC target QP of that domain, made through any handle on it in any process
 * ({@code xa_load(&xrcd->tgt_qps, qp_num)}; EINVAL for none, including a QP of another domain).</li>
 * </ul>
 * The QP returned is the target QP itself: what one handle changes, every handle sees.
 *
 * <p>Not thread safe: called under the fabric's lock.
 */
public final class XrcOpen
{
    private XrcOpen()
    {
    }

    /**
     * @param context the caller's context.
     * @param xrcd    a handle of the caller's on the XRC domain.
     * @param qpNum   the target QP's number.
     * @param type    the QP type asked for.
     * @return the target QP.
     * @throws dev.rnicsim.verbs.VerbsException EOPNOTSUPP, EINVAL as the class comment says; nothing changes.
     */
    public static QueuePair openQp(final Context context, final XrcDomain xrcd, final int qpNum, final QpType type)
    {
        final SimContext c = (SimContext) context;
        return c.device().fabric().guarded(() ->
        {
            final String verb = "ibv_open_qp";
            c.checkOpen(verb);
            XrcRules.checkXrc(verb, c.device());
            final SimXrcd x = XrcRules.liveDomain(verb, c, xrcd);
            if (type != QpType.XRC_RECV)
            {
                throw Errors.invalid(verb, "qp_type " + (type == null ? "not a type of the model" : type) + ": only an XRC target QP (IBV_QPT_XRC_RECV) can be "
                    + "opened (ib_open_qp); give IBV_QPT_XRC_RECV");
            }
            for (final SimQp q : x.domainTargetQps())
            {
                if (q.num == qpNum && !q.closed)
                {
                    return q;
                }
            }
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(qpNum) + " is no XRC target QP of this XRC "
                + "domain (ib_open_qp finds no such number among the domain's target QPs: a wrong number, a QP of "
                + "another domain or one destroyed already); give the qp_num of an XRC_RECV QP created in a domain "
                + "opened through the same file");
        });
    }
}
