package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import java.util.Set;

/**
 * The checks of {@code ibv_modify_qp} that come before any change, as the kernel makes them: the transition must be
 * in the state table with the attributes it requires and allows ({@link QpTransitions}, {@code ib_modify_qp_is_ok}),
 * and each attribute given must fit its field and the device ({@link QpAttributes#valueRefusal}: uverbs
 * {@code modify_qp}'s port check, the drivers' P_Key index, MTU and read/atomic depth checks); on mlx4 and mlx5 an
 * IBV_QP_CUR_STATE that is not the QP's state is refused by the device ({@link
 * ProviderRule#CUR_QP_STATE_CHECKED_BY_FIRMWARE}). Every refusal is EINVAL but an address vector's empty source GID
 * entry (ENODATA, {@link QpAttributes#emptySgidValidEntries}), and changes nothing. {@link QpModify#modify} runs them before it applies a change; a caller that carries a
 * program's whole {@code ibv_modify_qp} call (the C library's fabric server) runs them on what the program gave, the
 * whole mask and every value, before it applies the change its own way. Stateless.
 */
public final class QpModifyCheck
{
    private QpModifyCheck()
    {
    }

    /**
     * Checks an {@code ibv_modify_qp} call without applying it.
     *
     * @param qp   the QP.
     * @param attr the attributes.
     * @param mask which of them are given.
     * @throws dev.rnicsim.verbs.VerbsException EINVAL naming the transition's rule or the attribute's limit.
     */
    public static void check(final SimQp qp, final QpAttr attr, final Set<QpAttrMask> mask)
    {
        final EngineThread held = qp.device.fabric().enter();
        try
        {
            checkHeld(qp, attr, mask);
        }
        finally
        {
            SimFabric.exit(held);
        }
    }

    /**
     * {@link #check} with the fabric already entered.
     *
     * @return the mask as {@link QpTransitions#bits}.
     */
    static long checkHeld(final SimQp qp, final QpAttr attr, final Set<QpAttrMask> mask)
    {
        return checkHeld(qp, attr, mask, qp.state);
    }

    /**
     * {@link #checkHeld(SimQp, QpAttr, Set)} as if the QP were in {@code from}: a caller about to take a QP through
     * several transitions checks each one before the first is made ({@link ConnectChecks}).
     *
     * @param from the state the QP is in, or will be in when this call is made.
     * @return the mask as {@link QpTransitions#bits}.
     */
    static long checkHeld(final SimQp qp, final QpAttr attr, final Set<QpAttrMask> mask, final QpState from)
    {
        final String verb = "ibv_modify_qp";
        qp.checkOpen(verb);
        // An EnumSet cannot hold null (and is what callers pass): only other sets are searched for one.
        if (attr == null || mask == null
            || !(mask instanceof java.util.EnumSet) && NullElements.any(mask))
        {
            throw Errors.invalid(verb, "attr and attr_mask must be given, without null elements");
        }
        final long bits = QpTransitions.bits(mask);
        final QpState cur = (bits & 1L << QpAttrMask.CUR_STATE.ordinal()) != 0 ? attr.curQpState() : from;
        final QpState next = (bits & 1L << QpAttrMask.STATE.ordinal()) != 0 ? attr.qpState() : cur;
        if (cur == null || next == null)
        {
            throw Errors.invalid(verb, "qp_state or cur_qp_state is null; give the state with "
                + "IBV_QP_STATE in attr_mask");
        }
        final String refused = QpTransitions.refusal(qp.type, cur, next, mask, bits);
        if (refused != null)
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(qp.num) + " (" + qp.type + ", in " + from
                + "): "
                + refused + " (ib_modify_qp_is_ok); give exactly the attributes that transition takes; nothing "
                + "changed");
        }
        if (cur != from && qp.device.profile().follows(ProviderRule.CUR_QP_STATE_CHECKED_BY_FIRMWARE))
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(qp.num) + " is in " + from + ", not in "
                + "cur_qp_state " + cur + ": " + qp.device.profile().driver() + " sends the device the " + cur + " -> "
                + next + " command, which a QP in " + from + " refuses (bad QP state; "
                + ProviderRule.CUR_QP_STATE_CHECKED_BY_FIRMWARE + "); fix: leave IBV_QP_CUR_STATE out of attr_mask, "
                + "or give the state ibv_query_qp reports; nothing changed");
        }
        final String bad = QpAttributes.valueRefusal(qp.device, attr, mask, bits);
        if (bad != null)
        {
            throw Errors.invalid(verb, "QP 0x" + Integer.toHexString(qp.num) + ": " + bad
                + "; fix that attribute (ibv_modify_qp(3)); nothing changed");
        }
        final int valid = mask.contains(dev.rnicsim.verbs.QpAttrMask.AV) && attr.ahAttr() != null
            ? QpAttributes.emptySgidValidEntries(qp.device, attr.ahAttr()) : -1;
        if (valid >= 0)
        {
            throw emptySgid(verb, qp, attr.ahAttr(), valid);
        }
        return bits;
    }

    /**
     * @return the ENODATA of an address vector whose sgid_index names an empty entry of a port's GID table, of which
     *         {@code valid} entries hold a GID ({@link QpAttributes#emptySgidValidEntries}).
     */
    static dev.rnicsim.verbs.VerbsException emptySgid(final String verb, final SimQp qp,
        final dev.rnicsim.verbs.AhAttr ah, final int valid)
    {
        return Errors.of(verb, dev.rnicsim.verbs.Errno.ENODATA, "QP 0x" + Integer.toHexString(qp.num) + ": ah_attr"
            + " sgid_index=" + ah.sgidIndex() + " names an empty entry of port " + ah.portNum()
            + "'s GID table, which holds " + valid + " valid entries (rdma_fill_sgid_attr, rdma_get_gid_attr"
            + QpAttributes.noIpv4Note(qp.device) + "); give an index ibv_query_gid_ex answers, 0 to "
            + (valid - 1) + "; nothing changed");
    }
}
