package dev.rnicsim.ibverbs;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

/**
 * A program's {@code ibv_modify_qp} as it made it (MODIFY_QP: the whole mask and every attribute the mask names), read
 * so that the model checks all of it as the kernel does before anything changes ({@code QpModifyCheck}): a mask that
 * lacks an attribute the transition requires or holds one it does not take, a port that is not the device's, a P_Key
 * index past the table, a path MTU, read/atomic depth or field out of range are EINVAL, as from a real stack; the
 * fabric server applies the change only after. Before the model's checks, uverbs' own ({@code ib_uverbs_modify_qp},
 * {@code modify_qp} in drivers/infiniband/core/uverbs_cmd.c): attr_mask bits past {@code IBV_QP_DEST_QPN} are
 * EOPNOTSUPP ({@code IBV_QP_RATE_LIMIT} excepted, which mlx5 sends with the extended command), a qp_state or
 * cur_qp_state past {@code IBV_QPS_ERR} is EINVAL, and the bits an XRC QP has no use for are dropped before the state
 * table sees the mask ({@code modify_qp_mask}: MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER of an XRC initiator, MAX_QP_RD_ATOMIC,
 * RETRY_CNT and RNR_RETRY of an XRC target), as perftest's XRC connection relies on.
 *
 * @param attr the attributes.
 * @param mask which of them the program gave.
 */
record ModifyQpCall(QpAttr attr, Set<QpAttrMask> mask)
{
    /** The bytes of a MODIFY_QP request that carries the whole call (wire.h, struct wire_modify_qp). */
    static final int BYTES = 112;

    /** The attr_mask bits of the legacy command: IBV_QP_STATE (bit 0) to IBV_QP_DEST_QPN (bit 20). */
    private static final int STANDARD_BITS = (1 << 21) - 1;

    /** IBV_QP_RATE_LIMIT: accepted by the extended command, which the model keeps no rate for. */
    private static final int RATE_LIMIT = 1 << 25;

    /**
     * @param p    a MODIFY_QP request.
     * @param type the QP's type.
     * @return the call it carries, or null for a request of an older library that carries only part of it.
     * @throws VerbsException EOPNOTSUPP or EINVAL for what uverbs refuses before the driver sees the call.
     */
    static ModifyQpCall of(final ByteBuffer p, final QpType type)
    {
        if (p.limit() < BYTES)
        {
            return null;
        }
        final int bits = p.getInt(4);
        final int unknown = bits & ~(STANDARD_BITS | RATE_LIMIT);
        if (unknown != 0)
        {
            throw new VerbsException("ibv_modify_qp", Errno.EOPNOTSUPP.code(), "attr_mask bits 0x"
                + Integer.toHexString(unknown) + " name no attribute of enum ibv_qp_attr_mask (ib_uverbs_modify_qp "
                + "refuses bits past IBV_QP_DEST_QPN); pass only IBV_QP_* bits");
        }
        final QpAttr.Builder b = QpAttr.builder();
        final Set<QpAttrMask> given = QpAttrMask.fromBits(bits);
        if (type == QpType.XRC_SEND)
        {
            given.removeAll(EnumSet.of(QpAttrMask.MAX_DEST_RD_ATOMIC, QpAttrMask.MIN_RNR_TIMER));
        }
        else if (type == QpType.XRC_RECV)
        {
            given.removeAll(EnumSet.of(QpAttrMask.MAX_QP_RD_ATOMIC, QpAttrMask.RETRY_CNT, QpAttrMask.RNR_RETRY));
        }
        for (final QpAttrMask m : given)
        {
            switch (m)
            {
                case STATE -> b.state(state(p.getInt(8), "qp_state"));
                case CUR_STATE -> b.curState(state(p.getInt(80), "cur_qp_state"));
                case ACCESS_FLAGS -> b.accessFlags(Access.fromBits(p.getInt(12)));
                case PKEY_INDEX -> b.pkeyIndex(p.getInt(88));
                case PORT -> b.port(p.getInt(84));
                case QKEY -> b.qkey(p.getInt(72));
                case AV -> b.av(new AhAttr(p.getInt(52) != 0 ? gid(p, 56) : null, p.getInt(48), p.getInt(100),
                    p.getInt(104)));
                case PATH_MTU -> b.pathMtu(p.getInt(28));
                case TIMEOUT -> b.timeout(p.getInt(32));
                case RETRY_CNT -> b.retryCnt(p.getInt(36));
                case RNR_RETRY -> b.rnrRetry(p.getInt(40));
                case RQ_PSN -> b.rqPsn(p.getInt(20));
                case SQ_PSN -> b.sqPsn(p.getInt(24));
                case MAX_QP_RD_ATOMIC -> b.maxRdAtomic(p.getInt(92));
                case MAX_DEST_RD_ATOMIC -> b.maxDestRdAtomic(p.getInt(96));
                case MIN_RNR_TIMER -> b.minRnrTimer(p.getInt(44));
                case DEST_QPN -> b.destQpNum(p.getInt(16));
                default -> b.with(m); // alternate path, path migration, SQD notification: not modelled
            }
        }
        final Set<QpAttrMask> mask = EnumSet.noneOf(QpAttrMask.class);
        mask.addAll(b.mask());
        return new ModifyQpCall(b.build(), mask);
    }

    /** @return the 16 bytes at {@code at} as a GID's text, eight groups of four hex digits. */
    static String gid(final ByteBuffer p, final int at)
    {
        final StringBuilder gid = new StringBuilder();
        for (int i = 0; i < 16; i += 2)
        {
            if (i > 0)
            {
                gid.append(':');
            }
            gid.append(String.format("%02x%02x", p.get(at + i), p.get(at + i + 1)));
        }
        return gid.toString();
    }

    private static QpState state(final int value, final String field)
    {
        if (value < 0 || value > QpState.ERR.ordinal())
        {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL.code(), field + "=" + Integer.toUnsignedString(value)
                + " is no enum ibv_qp_state (IBV_QPS_RESET 0 to IBV_QPS_ERR 6; uverbs modify_qp refuses the rest); "
                + "give one of those");
        }
        return QpState.values()[value];
    }
}
