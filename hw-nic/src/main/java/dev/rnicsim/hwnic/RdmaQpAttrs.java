package dev.rnicsim.hwnic;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.VerbsException;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * {@link QpAttr} to and from {@code struct ibv_qp_attr} for {@code ibv_modify_qp} and {@code ibv_query_qp}: the
 * kernel reads only the members the mask names and checks them itself (drivers/infiniband/core/verbs.c
 * {@code ib_modify_qp_is_ok}), so every member is written and the errno comes back as it is. Stateless.
 */
final class RdmaQpAttrs
{
    /** Every bit of {@code enum ibv_qp_attr_mask} up to IBV_QP_DEST_QPN: what ibv_query_qp is asked for. */
    static final int ALL = (1 << 21) - 1;

    private RdmaQpAttrs()
    {
    }

    /**
     * Fills a zeroed {@code struct ibv_qp_attr}.
     *
     * @param a    the attributes.
     * @param mask the members the call sets (an AV is written only when it names one).
     * @param out  the struct.
     */
    static void write(final QpAttr a, final Set<QpAttrMask> mask, final MemorySegment out)
    {
        if (a == null || mask == null || mask.stream().anyMatch(java.util.Objects::isNull)
            || mask.contains(QpAttrMask.STATE) && a.qpState() == null
            || mask.contains(QpAttrMask.CUR_STATE) && a.curQpState() == null)
        {
            throw new VerbsException("ibv_modify_qp", Errno.EINVAL.code(), "attr and attr_mask must be given, with "
                + "the states the mask names");
        }
        if (a.qpState() != null)
        {
            out.set(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE, a.qpState().ordinal());
        }
        if (a.curQpState() != null)
        {
            out.set(JAVA_INT, IbvStructs.QP_ATTR_CUR_QP_STATE, a.curQpState().ordinal());
        }
        out.set(JAVA_INT, IbvStructs.QP_ATTR_PATH_MTU, a.pathMtu());
        out.set(JAVA_INT, IbvStructs.QP_ATTR_QKEY, a.qkey());
        out.set(JAVA_INT, IbvStructs.QP_ATTR_RQ_PSN, a.rqPsn());
        out.set(JAVA_INT, IbvStructs.QP_ATTR_SQ_PSN, a.sqPsn());
        out.set(JAVA_INT, IbvStructs.QP_ATTR_DEST_QP_NUM, a.destQpNum());
        out.set(JAVA_INT, IbvStructs.QP_ATTR_QP_ACCESS_FLAGS, Access.toBits(a.qpAccessFlags()));
        out.set(JAVA_SHORT, IbvStructs.QP_ATTR_PKEY_INDEX, (short)a.pkeyIndex());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_MAX_RD_ATOMIC, (byte)a.maxRdAtomic());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_MAX_DEST_RD_ATOMIC, (byte)a.maxDestRdAtomic());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_MIN_RNR_TIMER, (byte)a.minRnrTimer());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_PORT_NUM, (byte)a.portNum());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_TIMEOUT, (byte)a.timeout());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_RETRY_CNT, (byte)a.retryCnt());
        out.set(JAVA_BYTE, IbvStructs.QP_ATTR_RNR_RETRY, (byte)a.rnrRetry());
        final AhAttr ah = a.ahAttr();
        if (ah != null && mask.contains(QpAttrMask.AV))
        {
            out.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_PORT_NUM, (byte)ah.portNum());
            out.set(JAVA_SHORT, IbvStructs.QP_ATTR_AH_DLID, (short)ah.dlid());
            if (ah.isGlobal())
            {
                out.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_IS_GLOBAL, (byte)1);
                MemorySegment.copy(GlobalRoute.gidBytes(ah.dgid()), 0, out, JAVA_BYTE, IbvStructs.QP_ATTR_AH_DGID, 16);
                out.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_SGID_INDEX, (byte)ah.sgidIndex());
                out.set(JAVA_BYTE, IbvStructs.QP_ATTR_AH_HOP_LIMIT, (byte)GlobalRoute.HOP_LIMIT);
            }
        }
    }

    /**
     * @param in a {@code struct ibv_qp_attr} that ibv_query_qp filled.
     * @return its attributes.
     */
    static QpAttr read(final MemorySegment in)
    {
        final AhAttr ah;
        final boolean global = in.get(JAVA_BYTE, IbvStructs.QP_ATTR_AH_IS_GLOBAL) != 0;
        final int port = Byte.toUnsignedInt(in.get(JAVA_BYTE, IbvStructs.QP_ATTR_AH_PORT_NUM));
        final int dlid = Short.toUnsignedInt(in.get(JAVA_SHORT, IbvStructs.QP_ATTR_AH_DLID));
        if (global || dlid != 0)
        {
            final StringBuilder g = new StringBuilder();
            for (int i = 0; i < 16; i += 2)
            {
                g.append(i == 0 ? "" : ":").append(String.format("%02x%02x",
                    in.get(JAVA_BYTE, IbvStructs.QP_ATTR_AH_DGID + i), in.get(JAVA_BYTE, IbvStructs.QP_ATTR_AH_DGID
                    + i + 1)));
            }
            ah = new AhAttr(global ? g.toString() : null, dlid, port,
                Byte.toUnsignedInt(in.get(JAVA_BYTE, IbvStructs.QP_ATTR_AH_SGID_INDEX)));
        }
        else
        {
            ah = null;
        }
        return new QpAttr(state(in.get(JAVA_INT, IbvStructs.QP_ATTR_QP_STATE)),
            state(in.get(JAVA_INT, IbvStructs.QP_ATTR_CUR_QP_STATE)),
            Access.fromBits(in.get(JAVA_INT, IbvStructs.QP_ATTR_QP_ACCESS_FLAGS)),
            Short.toUnsignedInt(in.get(JAVA_SHORT, IbvStructs.QP_ATTR_PKEY_INDEX)),
            u8(in, IbvStructs.QP_ATTR_PORT_NUM), in.get(JAVA_INT, IbvStructs.QP_ATTR_QKEY), ah,
            in.get(JAVA_INT, IbvStructs.QP_ATTR_PATH_MTU), u8(in, IbvStructs.QP_ATTR_TIMEOUT),
            u8(in, IbvStructs.QP_ATTR_RETRY_CNT), u8(in, IbvStructs.QP_ATTR_RNR_RETRY),
            in.get(JAVA_INT, IbvStructs.QP_ATTR_RQ_PSN), in.get(JAVA_INT, IbvStructs.QP_ATTR_SQ_PSN),
            u8(in, IbvStructs.QP_ATTR_MAX_RD_ATOMIC), u8(in, IbvStructs.QP_ATTR_MAX_DEST_RD_ATOMIC),
            u8(in, IbvStructs.QP_ATTR_MIN_RNR_TIMER), in.get(JAVA_INT, IbvStructs.QP_ATTR_DEST_QP_NUM),
            in.get(JAVA_BYTE, IbvStructs.QP_ATTR_SQ_DRAINING) != 0);
    }

    private static int u8(final MemorySegment in, final long offset)
    {
        return Byte.toUnsignedInt(in.get(JAVA_BYTE, offset));
    }

    private static QpState state(final int code)
    {
        return code >= 0 && code < QpState.values().length ? QpState.values()[code] : QpState.ERR;
    }
}
