package dev.rnicsim.simnic;

import static dev.rnicsim.verbs.QpAttrMask.ACCESS_FLAGS;
import static dev.rnicsim.verbs.QpAttrMask.ALT_PATH;
import static dev.rnicsim.verbs.QpAttrMask.AV;
import static dev.rnicsim.verbs.QpAttrMask.CUR_STATE;
import static dev.rnicsim.verbs.QpAttrMask.DEST_QPN;
import static dev.rnicsim.verbs.QpAttrMask.EN_SQD_ASYNC_NOTIFY;
import static dev.rnicsim.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC;
import static dev.rnicsim.verbs.QpAttrMask.MAX_QP_RD_ATOMIC;
import static dev.rnicsim.verbs.QpAttrMask.MIN_RNR_TIMER;
import static dev.rnicsim.verbs.QpAttrMask.PATH_MIG_STATE;
import static dev.rnicsim.verbs.QpAttrMask.PATH_MTU;
import static dev.rnicsim.verbs.QpAttrMask.PKEY_INDEX;
import static dev.rnicsim.verbs.QpAttrMask.PORT;
import static dev.rnicsim.verbs.QpAttrMask.RETRY_CNT;
import static dev.rnicsim.verbs.QpAttrMask.RNR_RETRY;
import static dev.rnicsim.verbs.QpAttrMask.RQ_PSN;
import static dev.rnicsim.verbs.QpAttrMask.SQ_PSN;
import static dev.rnicsim.verbs.QpAttrMask.TIMEOUT;

import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The XRC_INI (XRC_SEND) and XRC_TGT (XRC_RECV) rows of the kernel's {@code qp_state_table}
 * (drivers/infiniband/core/verbs.c, checked by {@code ib_modify_qp_is_ok}): the initiator takes RC's requester
 * attributes and none of the responder's (no MAX_DEST_RD_ATOMIC, no MIN_RNR_TIMER at RTR), the target RC's responder
 * attributes and of the requester's only TIMEOUT and SQ_PSN at RTS. Which transitions exist is the same for every
 * type ({@link QpTransitions#exists}). Stateless.
 */
final class XrcTransitions
{
    private record Row(Set<QpAttrMask> ini, Set<QpAttrMask> tgt)
    {
    }

    private record Rule(Row required, Row optional)
    {
    }

    private static final Set<QpAttrMask> NONE = EnumSet.noneOf(QpAttrMask.class);
    private static final Row EMPTY = new Row(NONE, NONE);
    private static final Map<String, Rule> RULES = Map.of(
        key(QpState.RESET, QpState.INIT), new Rule(both(EnumSet.of(PKEY_INDEX, PORT, ACCESS_FLAGS)), EMPTY),
        key(QpState.INIT, QpState.INIT), new Rule(EMPTY, both(EnumSet.of(PKEY_INDEX, PORT, ACCESS_FLAGS))),
        key(QpState.INIT, QpState.RTR), new Rule(
            new Row(EnumSet.of(AV, PATH_MTU, DEST_QPN, RQ_PSN),
                EnumSet.of(AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER)),
            both(EnumSet.of(ALT_PATH, ACCESS_FLAGS, PKEY_INDEX))),
        key(QpState.RTR, QpState.RTS), new Rule(
            new Row(EnumSet.of(TIMEOUT, RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC), EnumSet.of(TIMEOUT, SQ_PSN)),
            new Row(EnumSet.of(CUR_STATE, ALT_PATH, ACCESS_FLAGS, PATH_MIG_STATE),
                EnumSet.of(CUR_STATE, ALT_PATH, ACCESS_FLAGS, MIN_RNR_TIMER, PATH_MIG_STATE))),
        key(QpState.RTS, QpState.RTS), new Rule(EMPTY, backToRts()),
        key(QpState.SQD, QpState.RTS), new Rule(EMPTY, backToRts()),
        key(QpState.RTS, QpState.SQD), new Rule(EMPTY, both(EnumSet.of(EN_SQD_ASYNC_NOTIFY))),
        key(QpState.SQD, QpState.SQD), new Rule(EMPTY, new Row(
            EnumSet.of(PORT, AV, TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC, ALT_PATH, ACCESS_FLAGS, PKEY_INDEX,
                PATH_MIG_STATE),
            EnumSet.of(PORT, AV, TIMEOUT, MAX_DEST_RD_ATOMIC, ALT_PATH, ACCESS_FLAGS, PKEY_INDEX, MIN_RNR_TIMER,
                PATH_MIG_STATE))));

    private XrcTransitions()
    {
    }

    private static String key(final QpState from, final QpState to)
    {
        return from + ">" + to;
    }

    private static Row both(final Set<QpAttrMask> s)
    {
        return new Row(s, s);
    }

    private static Row backToRts()
    {
        return new Row(EnumSet.of(CUR_STATE, ACCESS_FLAGS, ALT_PATH, PATH_MIG_STATE),
            EnumSet.of(CUR_STATE, ACCESS_FLAGS, ALT_PATH, PATH_MIG_STATE, MIN_RNR_TIMER));
    }

    /** @return true for the two XRC types, whose rows this class holds. */
    static boolean covers(final QpType type)
    {
        return type == QpType.XRC_SEND || type == QpType.XRC_RECV;
    }

    private static Set<QpAttrMask> pick(final Row row, final QpType type)
    {
        final Set<QpAttrMask> s = type == QpType.XRC_SEND ? row.ini() : row.tgt();
        return s.isEmpty() ? EnumSet.noneOf(QpAttrMask.class) : EnumSet.copyOf(s);
    }

    static Set<QpAttrMask> required(final QpType type, final QpState from, final QpState to)
    {
        final Rule r = RULES.get(key(from, to));
        return r == null ? EnumSet.noneOf(QpAttrMask.class) : pick(r.required(), type);
    }

    static Set<QpAttrMask> optional(final QpType type, final QpState from, final QpState to)
    {
        final Rule r = RULES.get(key(from, to));
        return r == null ? EnumSet.noneOf(QpAttrMask.class) : pick(r.optional(), type);
    }
}
