package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.rnicsim.verbs.DeviceAttributes;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Creating an {@link RdmaQp}: the checks the binding makes first (what it cannot express natively), then
 * {@code ibv_create_qp} with a {@code struct ibv_qp_init_attr}, or {@code ibv_create_qp_ex} with a
 * {@code struct ibv_qp_init_attr_ex} carrying {@code send_ops_flags} when the QP is given them
 * ({@link ExtendedQpVerbs}).
 *
 * <p>Thread safe: stateless.
 */
final class QpCreation
{
    private QpCreation()
    {
    }

    /**
     * {@code ibv_create_qp}.
     *
     * @param pd   the PD.
     * @param attr CQs of the PD's context, type RC, UC, UD or XRC_SEND, capacities.
     * @return the QP in RESET.
     * @throws VerbsException EINVAL for CQs that are not open CQs of this context or an SRQ that is not a live one
     *                        of the PD, or type XRC_RECV (created in a domain); EOPNOTSUPP for send_ops_flags with
     *                        FLUSH or ATOMIC_WRITE (not bound),
     *                        or whatever send_ops_flags the provider refuses (ibv_create_qp_ex, used when
     *                        {@link QpInitAttr#sendOps()} is given);
     *                        the provider's errno otherwise (EINVAL above the device's limits, ENOMEM with the
     *                        memlock limit).
     */
    static RdmaQp create(final RdmaPd pd, final QpInitAttr attr)
    {
        final String verb = "ibv_create_qp";
        if (attr == null)
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "attr is null");
        }
        if (attr.type() == QpType.XRC_RECV)
        {
            // The kernel's create_xrc_qp_user: a target QP belongs to an XRC domain, never to a PD.
            throw new VerbsException(verb, Errno.EINVAL.code(), "an XRC_RECV QP is created in an XRC domain, not "
                + "through a PD: use Context.createXrcRecvQp");
        }
        if (attr.sendOps() != null && !attr.sendOps().stream().allMatch(ExtendedQpVerbs::postable))
        {
            // ibv_create_qp_ex refuses send_ops_flags it has no ibv_wr_* builder for with EOPNOTSUPP; this binding
            // posts through ibv_post_send, which has no opcode for FLUSH or ATOMIC_WRITE (REG_MR is a kernel verb).
            throw new VerbsException("ibv_create_qp_ex", Errno.EOPNOTSUPP.code(), "send_ops_flags "
                + attr.sendOps() + ": FLUSH and ATOMIC_WRITE are posted only by the ibv_wr_* builders "
                + "(ibv_wr_post(3)), which this backend does not bind yet; create the QP without them, or use the "
                + "simulated backend");
        }
        if (attr.srq() != null && (!(attr.srq() instanceof RdmaSrq q) || q.isClosed() || q.pd() != pd))
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the SRQ must be a live SRQ of this backend in the "
                + "QP's PD: " + attr.srq());
        }
        if (!(attr.sendCq() instanceof RdmaCq s) || !(attr.recvCq() instanceof RdmaCq r) || s.isClosed()
            || r.isClosed() || s.context() != pd.context() || r.context() != pd.context())
        {
            throw new VerbsException(verb, Errno.EINVAL.code(), "the CQs must be open CQs of the PD's context");
        }
        final QpCap c = attr.cap();
        final boolean extended = attr.sendOps() != null;
        try (Arena a = Arena.ofConfined())
        {
            // struct ibv_qp_init_attr_ex begins with struct ibv_qp_init_attr's members at the same offsets.
            final MemorySegment init = a.allocate(extended ? ExtendedQpVerbs.IBV_QP_INIT_ATTR_EX
                : IbvStructs.IBV_QP_INIT_ATTR);
            init.set(ADDRESS, IbvStructs.QP_INIT_SEND_CQ, s.segment());
            init.set(ADDRESS, IbvStructs.QP_INIT_RECV_CQ, r.segment());
            init.set(JAVA_INT, IbvStructs.QP_INIT_MAX_SEND_WR, c.maxSendWr());
            init.set(JAVA_INT, IbvStructs.QP_INIT_MAX_RECV_WR, c.maxRecvWr());
            init.set(JAVA_INT, IbvStructs.QP_INIT_MAX_SEND_SGE, c.maxSendSge());
            init.set(JAVA_INT, IbvStructs.QP_INIT_MAX_RECV_SGE, c.maxRecvSge());
            init.set(JAVA_INT, IbvStructs.QP_INIT_MAX_INLINE_DATA, c.maxInlineDataBytes());
            init.set(JAVA_INT, IbvStructs.QP_INIT_QP_TYPE, attr.type().code());
            init.set(JAVA_INT, IbvStructs.QP_INIT_SQ_SIG_ALL, attr.sqSigAll() ? 1 : 0);
            if (attr.srq() instanceof RdmaSrq q)
            {
                init.set(ADDRESS, IbvStructs.offset(IbvStructs.IBV_QP_INIT_ATTR, "srq"), q.segment());
            }
            final Errnos.Result res;
            if (extended)
            {
                init.set(JAVA_INT, ExtendedQpVerbs.INIT_EX_COMP_MASK, ExtendedQpVerbs.IBV_QP_INIT_ATTR_PD
                    | ExtendedQpVerbs.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
                init.set(ADDRESS, ExtendedQpVerbs.INIT_EX_PD, pd.segment());
                init.set(JAVA_LONG, ExtendedQpVerbs.INIT_EX_SEND_OPS_FLAGS,
                    ExtendedQpVerbs.sendOpsFlags(attr.sendOps()));
                res = pd.context().lib().extendedQps().createQpEx(pd.context().segment(), init);
            }
            else
            {
                res = pd.context().lib().createQp(pd.segment(), init);
            }
            if (res.isNull())
            {
                final DeviceAttributes d = pd.context().attributes();
                throw new VerbsException(extended ? "ibv_create_qp_ex" : verb, res.errno(), attr.type() + " " + c
                    + (extended ? " send_ops_flags " + attr.sendOps() : "") + " (max_qp_wr=" + d.maxQpWr()
                    + ", max_sge=" + d.maxSge() + ", max_qp=" + d.maxQp() + ")" + (res.errno() == Errno.ENOMEM.code()
                        ? ": " + Diagnosis.memlock() : ""));
            }
            return new RdmaQp(pd, res.pointer(IbvStructs.IBV_QP.byteSize()), attr.type(), (RdmaSrq)attr.srq());
        }
    }
}
