package dev.rnicsim.simnic;

import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

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
import static dev.rnicsim.verbs.QpAttrMask.QKEY;
import static dev.rnicsim.verbs.QpAttrMask.RETRY_CNT;
import static dev.rnicsim.verbs.QpAttrMask.RNR_RETRY;
import static dev.rnicsim.verbs.QpAttrMask.RQ_PSN;
import static dev.rnicsim.verbs.QpAttrMask.SQ_PSN;
import static dev.rnicsim.verbs.QpAttrMask.TIMEOUT;

/**
 * The QP state machine of IBA 10.3.1 as the Linux core checks every {@code ibv_modify_qp} against it: the transitions
 * that exist, and per transition and QP type the attributes the mask must hold (required) and the ones it may hold
 * (optional); STATE itself is always allowed (kernel drivers/infiniband/core/verbs.c, {@code qp_state_table} and
 * {@code ib_modify_qp_is_ok}, which every driver's modify_qp calls and answers with EINVAL when it fails). Any state
 * goes to RESET; every state but RESET goes to ERR (RESET → ERR is not in the table). CUR_STATE is accepted only from
 * RTR, RTS, SQD and SQE. The XRC rows are in {@link XrcTransitions}. Stateless.
 */
public final class QpTransitions
{
    private record Rule(Map<QpType, Set<QpAttrMask>> required, Map<QpType, Set<QpAttrMask>> optional)
    {
        Rule
        {
            // Read on every ibv_modify_qp: an EnumMap's lookup is an array index.
            required = new EnumMap<>(required);
            optional = new EnumMap<>(optional);
        }
    }

    private static final Map<QpState, Map<QpState, Rule>> TABLE = table();

    private static final int STATES = QpState.values().length;

    /**
     * The table again as bits ({@link #bits}), read by every {@code ibv_modify_qp}: whether the transition exists by
     * {@code from * STATES + to}; the required and the optional attributes by {@link #cell}.
     */
    private static final boolean[] EXISTS = new boolean[STATES * STATES];
    private static final long[] REQUIRED = new long[QpType.values().length * STATES * STATES];
    private static final long[] OPTIONAL = new long[REQUIRED.length];

    static
    {
        for (final QpState from : QpState.values())
        {
            for (final QpState to : QpState.values())
            {
                EXISTS[from.ordinal() * STATES + to.ordinal()] = exists(from, to);
                for (final QpType type : QpType.values())
                {
                    REQUIRED[cell(type, from, to)] = walkedBits(rule(type, from, to, true));
                    OPTIONAL[cell(type, from, to)] = walkedBits(rule(type, from, to, false));
                }
            }
        }
    }

    private QpTransitions()
    {
    }

    private static Map<QpState, Map<QpState, Rule>> table()
    {
        final Map<QpState, Map<QpState, Rule>> t = new EnumMap<>(QpState.class);
        for (final QpState s : QpState.values())
        {
            t.put(s, new EnumMap<>(QpState.class));
            // Every state may be reset; every state but RESET may be moved to ERR; neither takes attributes.
            t.get(s).put(QpState.RESET, none());
            if (s != QpState.RESET)
            {
                t.get(s).put(QpState.ERR, none());
            }
        }
        final Set<QpAttrMask> connectedInit = EnumSet.of(PKEY_INDEX, PORT, ACCESS_FLAGS);
        t.get(QpState.RESET).put(QpState.INIT, rule(
            connectedInit, EnumSet.of(PKEY_INDEX, PORT, QKEY), set(), set(), set()));
        t.get(QpState.INIT).put(QpState.INIT, rule(
            set(), set(), connectedInit, EnumSet.of(PKEY_INDEX, PORT, QKEY), set()));
        t.get(QpState.INIT).put(QpState.RTR, new Rule(
            Map.of(QpType.RC, EnumSet.of(AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER),
                QpType.UC, EnumSet.of(AV, PATH_MTU, DEST_QPN, RQ_PSN), QpType.UD, set()),
            Map.of(QpType.RC, EnumSet.of(ALT_PATH, ACCESS_FLAGS, PKEY_INDEX),
                QpType.UC, EnumSet.of(ALT_PATH, ACCESS_FLAGS, PKEY_INDEX), QpType.UD, EnumSet.of(PKEY_INDEX, QKEY))));
        t.get(QpState.RTR).put(QpState.RTS, new Rule(
            Map.of(QpType.RC, EnumSet.of(TIMEOUT, RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC),
                QpType.UC, EnumSet.of(SQ_PSN), QpType.UD, EnumSet.of(SQ_PSN)),
            Map.of(QpType.RC, EnumSet.of(CUR_STATE, ALT_PATH, ACCESS_FLAGS, MIN_RNR_TIMER, PATH_MIG_STATE),
                QpType.UC, EnumSet.of(CUR_STATE, ALT_PATH, ACCESS_FLAGS, PATH_MIG_STATE),
                QpType.UD, EnumSet.of(CUR_STATE, QKEY))));
        final Map<QpType, Set<QpAttrMask>> backToRts = Map.of(
            QpType.RC, EnumSet.of(CUR_STATE, ACCESS_FLAGS, ALT_PATH, PATH_MIG_STATE, MIN_RNR_TIMER),
            QpType.UC, EnumSet.of(CUR_STATE, ACCESS_FLAGS, ALT_PATH, PATH_MIG_STATE),
            QpType.UD, EnumSet.of(CUR_STATE, QKEY));
        t.get(QpState.RTS).put(QpState.RTS, new Rule(noneByType(), backToRts));
        t.get(QpState.SQD).put(QpState.RTS, new Rule(noneByType(), backToRts));
        t.get(QpState.RTS).put(QpState.SQD, rule(set(), set(),
            EnumSet.of(EN_SQD_ASYNC_NOTIFY), EnumSet.of(EN_SQD_ASYNC_NOTIFY), EnumSet.of(EN_SQD_ASYNC_NOTIFY)));
        t.get(QpState.SQD).put(QpState.SQD, rule(set(), set(),
            EnumSet.of(PORT, AV, TIMEOUT, RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC, MAX_DEST_RD_ATOMIC, ALT_PATH,
                ACCESS_FLAGS, PKEY_INDEX, MIN_RNR_TIMER, PATH_MIG_STATE),
            EnumSet.of(PKEY_INDEX, QKEY), EnumSet.of(AV, ALT_PATH, ACCESS_FLAGS, PKEY_INDEX, PATH_MIG_STATE)));
        // SQE is left for RTS only: the table gives RC no attributes there, UC CUR_STATE and ACCESS_FLAGS.
        t.get(QpState.SQE).put(QpState.RTS, new Rule(noneByType(), Map.of(QpType.RC, set(),
            QpType.UC, EnumSet.of(CUR_STATE, ACCESS_FLAGS), QpType.UD, EnumSet.of(CUR_STATE, QKEY))));
        return t;
    }

    /**
     * A rule whose required set is the same for RC and UC; the optional set of UC is the RC one unless given.
     */
    private static Rule rule(final Set<QpAttrMask> reqRcUc, final Set<QpAttrMask> reqUd,
        final Set<QpAttrMask> optRcOrRcUc, final Set<QpAttrMask> optUd, final Set<QpAttrMask> optUc)
    {
        final Map<QpType, Set<QpAttrMask>> opt = new EnumMap<>(QpType.class);
        opt.put(QpType.RC, optRcOrRcUc);
        opt.put(QpType.UC, optUc.isEmpty() ? optRcOrRcUc : optUc);
        opt.put(QpType.UD, optUd);
        return new Rule(Map.of(QpType.RC, reqRcUc, QpType.UC, reqRcUc, QpType.UD, reqUd), opt);
    }

    private static Rule none()
    {
        return new Rule(noneByType(), noneByType());
    }

    private static Map<QpType, Set<QpAttrMask>> noneByType()
    {
        return Map.of(QpType.RC, set(), QpType.UC, set(), QpType.UD, set());
    }

    private static Set<QpAttrMask> set()
    {
        return EnumSet.noneOf(QpAttrMask.class);
    }

    /**
     * @param from the current state.
     * @param to   the next state.
     * @return true when the table has the transition.
     */
    public static boolean exists(final QpState from, final QpState to)
    {
        return TABLE.get(from).containsKey(to);
    }

    /**
     * @param type the QP type.
     * @param from the current state.
     * @param to   the next state (a transition that {@link #exists}).
     * @return the attributes the mask must hold, STATE aside.
     */
    public static Set<QpAttrMask> required(final QpType type, final QpState from, final QpState to)
    {
        if (XrcTransitions.covers(type))
        {
            return XrcTransitions.required(type, from, to);
        }
        final Rule r = TABLE.get(from).get(to);
        final Set<QpAttrMask> q = r == null ? null : r.required().get(type);
        return q == null || q.isEmpty() ? set() : EnumSet.copyOf(q);
    }

    /**
     * @param type the QP type.
     * @param from the current state.
     * @param to   the next state.
     * @return the attributes the mask may hold besides the required ones and STATE.
     */
    public static Set<QpAttrMask> optional(final QpType type, final QpState from, final QpState to)
    {
        if (XrcTransitions.covers(type))
        {
            return XrcTransitions.optional(type, from, to);
        }
        final Rule r = TABLE.get(from).get(to);
        final Set<QpAttrMask> o = r == null ? null : r.optional().get(type);
        return o == null || o.isEmpty() ? set() : EnumSet.copyOf(o);
    }

    /** The table's required (or optional) set of a transition, not copied: for reading only. */
    private static Set<QpAttrMask> rule(final QpType type, final QpState from, final QpState to,
        final boolean required)
    {
        if (XrcTransitions.covers(type))
        {
            return required ? XrcTransitions.required(type, from, to) : XrcTransitions.optional(type, from, to);
        }
        final Rule r = TABLE.get(from).get(to);
        final Set<QpAttrMask> q = r == null ? null : required ? r.required().get(type) : r.optional().get(type);
        return q == null ? Set.of() : q;
    }

    private static int cell(final QpType type, final QpState from, final QpState to)
    {
        return (type.ordinal() * STATES + from.ordinal()) * STATES + to.ordinal();
    }

    /**
     * @param mask attributes (no null among them).
     * @return one bit per attribute, at its ordinal.
     */
    static long bits(final Set<QpAttrMask> mask)
    {
        return MASK_BITS.of(mask);
    }

    /** The bits of the masks modify is given, the last of each size kept. */
    private static final EnumSetBits<QpAttrMask> MASK_BITS = new EnumSetBits<>(QpAttrMask.class,
        QpTransitions::walkedBits);

    private static long walkedBits(final Set<QpAttrMask> mask)
    {
        long b = 0;
        for (final QpAttrMask m : mask)
        {
            b |= 1L << m.ordinal();
        }
        return b;
    }

    /**
     * {@link #refusal(QpType, QpState, QpState, Set)} with the mask's {@link #bits} at hand: the allowed case is
     * answered from the table's bits; a refusal is worded by the method that words it.
     */
    static String refusal(final QpType type, final QpState from, final QpState to, final Set<QpAttrMask> mask,
        final long bits)
    {
        if ((bits & 1L << CUR_STATE.ordinal()) != 0 && from != QpState.RTR && from != QpState.RTS
            && from != QpState.SQD && from != QpState.SQE || !EXISTS[from.ordinal() * STATES + to.ordinal()])
        {
            return refusal(type, from, to, mask);
        }
        final int c = cell(type, from, to);
        final long req = REQUIRED[c];
        if ((bits & req) != req || (bits & ~(req | OPTIONAL[c] | 1L << QpAttrMask.STATE.ordinal())) != 0)
        {
            return refusal(type, from, to, mask);
        }
        return null;
    }

    /**
     * {@code ib_modify_qp_is_ok}: why the transition with this mask is refused, or null when it is allowed.
     *
     * @param type the QP type.
     * @param from the current state (cur_qp_state when the mask has CUR_STATE).
     * @param to   the next state (the current one when the mask has no STATE).
     * @param mask the mask.
     * @return the reason, naming the attributes missing or not allowed, or null.
     */
    public static String refusal(final QpType type, final QpState from, final QpState to, final Set<QpAttrMask> mask)
    {
        if (mask.contains(CUR_STATE) && from != QpState.RTR && from != QpState.RTS && from != QpState.SQD
            && from != QpState.SQE)
        {
            return "IBV_QP_CUR_STATE is accepted only from RTR, RTS, SQD or SQE, not from " + from;
        }
        if (!exists(from, to))
        {
            return "there is no transition " + from + " -> " + to + " (IBA 10.3.1; from " + from + " a QP goes to "
                + TABLE.get(from).keySet() + ")";
        }
        final Set<QpAttrMask> req = rule(type, from, to, true);
        if (!mask.containsAll(req))
        {
            final Set<QpAttrMask> missing = set();
            missing.addAll(req);
            missing.removeAll(mask);
            return from + " -> " + to + " of a " + type + " QP requires " + names(req) + "; missing " + names(missing);
        }
        final Set<QpAttrMask> opt = rule(type, from, to, false);
        boolean beyond = false;
        for (final QpAttrMask m : mask)
        {
            beyond |= m != QpAttrMask.STATE && !req.contains(m) && !opt.contains(m);
        }
        if (!beyond)
        {
            return null;
        }
        final Set<QpAttrMask> extra = set();
        extra.addAll(mask);
        extra.remove(QpAttrMask.STATE);
        extra.removeAll(req);
        extra.removeAll(opt);
        return from + " -> " + to + " of a " + type + " QP does not take " + names(extra) + " (required: "
            + names(req) + ", optional: " + names(optional(type, from, to)) + ")" + takenBy(type, extra);
    }

    /**
     * Where the attributes a transition refused may be given instead: for each, the transitions of this QP type
     * whose row of {@code qp_state_table} takes it (required or optional). A user who changes the address vector of a
     * connected QP learns that RTS -> RTS does not take IBV_QP_AV, but INIT -> RTR (and SQD -> SQD) does
     * (linux-rdma/perftest issue 150: a static rate changed in RTS was EINVAL, "only in RTR").
     *
     * @return "; IBV_QP_X is taken by A -> B, C -> D" for each attribute, or "" when no transition takes it.
     */
    static String takenBy(final QpType type, final Set<QpAttrMask> attrs)
    {
        final StringBuilder b = new StringBuilder();
        for (final QpAttrMask m : attrs)
        {
            final StringBuilder where = new StringBuilder();
            for (final QpState from : QpState.values())
            {
                for (final QpState to : TABLE.get(from).keySet())
                {
                    if (rule(type, from, to, true).contains(m) || rule(type, from, to, false).contains(m))
                    {
                        where.append(where.isEmpty() ? "" : ", ").append(from).append(" -> ").append(to);
                    }
                }
            }
            b.append("; IBV_QP_").append(m.name()).append(where.isEmpty() ? " is taken by no transition of a "
                + type + " QP" : " is taken by " + where);
        }
        return b.toString();
    }

    /**
     * @param mask attributes.
     * @return their libibverbs names, IBV_QP_..., joined with |, or "none".
     */
    public static String names(final Set<QpAttrMask> mask)
    {
        if (mask.isEmpty())
        {
            return "none";
        }
        final StringBuilder b = new StringBuilder();
        final Set<QpAttrMask> sorted = set();
        sorted.addAll(mask);
        for (final QpAttrMask m : sorted)
        {
            b.append(b.isEmpty() ? "" : "|").append("IBV_QP_").append(m.name());
        }
        return b.toString();
    }
}
