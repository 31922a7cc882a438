package dev.rnicsim.simnic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.AhAttr;
import dev.rnicsim.verbs.Errno;
import dev.rnicsim.verbs.QpAttr;
import dev.rnicsim.verbs.QpAttrMask;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import dev.rnicsim.verbs.VerbsException;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Random sequences of ibv_modify_qp calls against the kernel's transition table, written out here on its own from
 * drivers/infiniband/core/verbs.c ({@code qp_state_table}, {@code ib_modify_qp_is_ok}): a call succeeds exactly when
 * the table has the transition for the QP type and the mask holds every required and no other attribute (STATE
 * aside); a success moves the QP to the target state, a refusal is EINVAL and leaves every attribute as it was.
 */
class ModifyQpProperties
{
    /** FROM>TO TYPE required / optional, one row per transition and type with attributes. */
    private static final List<String> ROWS = List.of(
        "RESET>INIT RC PKEY_INDEX,PORT,ACCESS_FLAGS /",
        "RESET>INIT UC PKEY_INDEX,PORT,ACCESS_FLAGS /",
        "RESET>INIT UD PKEY_INDEX,PORT,QKEY /",
        "INIT>INIT RC / PKEY_INDEX,PORT,ACCESS_FLAGS",
        "INIT>INIT UC / PKEY_INDEX,PORT,ACCESS_FLAGS",
        "INIT>INIT UD / PKEY_INDEX,PORT,QKEY",
        "INIT>RTR RC AV,PATH_MTU,DEST_QPN,RQ_PSN,MAX_DEST_RD_ATOMIC,MIN_RNR_TIMER / ALT_PATH,ACCESS_FLAGS,PKEY_INDEX",
        "INIT>RTR UC AV,PATH_MTU,DEST_QPN,RQ_PSN / ALT_PATH,ACCESS_FLAGS,PKEY_INDEX",
        "INIT>RTR UD / PKEY_INDEX,QKEY",
        "RTR>RTS RC TIMEOUT,RETRY_CNT,RNR_RETRY,SQ_PSN,MAX_QP_RD_ATOMIC / CUR_STATE,ALT_PATH,ACCESS_FLAGS,"
            + "MIN_RNR_TIMER,PATH_MIG_STATE",
        "RTR>RTS UC SQ_PSN / CUR_STATE,ALT_PATH,ACCESS_FLAGS,PATH_MIG_STATE",
        "RTR>RTS UD SQ_PSN / CUR_STATE,QKEY",
        "RTS>RTS RC / CUR_STATE,ACCESS_FLAGS,ALT_PATH,PATH_MIG_STATE,MIN_RNR_TIMER",
        "RTS>RTS UC / CUR_STATE,ACCESS_FLAGS,ALT_PATH,PATH_MIG_STATE",
        "RTS>RTS UD / CUR_STATE,QKEY",
        "RTS>SQD RC / EN_SQD_ASYNC_NOTIFY",
        "RTS>SQD UC / EN_SQD_ASYNC_NOTIFY",
        "RTS>SQD UD / EN_SQD_ASYNC_NOTIFY",
        "SQD>RTS RC / CUR_STATE,ALT_PATH,ACCESS_FLAGS,MIN_RNR_TIMER,PATH_MIG_STATE",
        "SQD>RTS UC / CUR_STATE,ALT_PATH,ACCESS_FLAGS,PATH_MIG_STATE",
        "SQD>RTS UD / CUR_STATE,QKEY",
        "SQD>SQD RC / PORT,AV,TIMEOUT,RETRY_CNT,RNR_RETRY,MAX_QP_RD_ATOMIC,MAX_DEST_RD_ATOMIC,ALT_PATH,ACCESS_FLAGS,"
            + "PKEY_INDEX,MIN_RNR_TIMER,PATH_MIG_STATE",
        "SQD>SQD UC / AV,ALT_PATH,ACCESS_FLAGS,PKEY_INDEX,PATH_MIG_STATE",
        "SQD>SQD UD / PKEY_INDEX,QKEY",
        "SQE>RTS UC / CUR_STATE,ACCESS_FLAGS",
        "SQE>RTS UD / CUR_STATE,QKEY",
        // XRC_INI (XRC_SEND) and XRC_TGT (XRC_RECV)
        "RESET>INIT XRC_SEND PKEY_INDEX,PORT,ACCESS_FLAGS /",
        "RESET>INIT XRC_RECV PKEY_INDEX,PORT,ACCESS_FLAGS /",
        "INIT>INIT XRC_SEND / PKEY_INDEX,PORT,ACCESS_FLAGS",
        "INIT>INIT XRC_RECV / PKEY_INDEX,PORT,ACCESS_FLAGS",
        "INIT>RTR XRC_SEND AV,PATH_MTU,DEST_QPN,RQ_PSN / ALT_PATH,ACCESS_FLAGS,PKEY_INDEX",
        "INIT>RTR XRC_RECV AV,PATH_MTU,DEST_QPN,RQ_PSN,MAX_DEST_RD_ATOMIC,MIN_RNR_TIMER / ALT_PATH,ACCESS_FLAGS,"
            + "PKEY_INDEX",
        "RTR>RTS XRC_SEND TIMEOUT,RETRY_CNT,RNR_RETRY,SQ_PSN,MAX_QP_RD_ATOMIC / CUR_STATE,ALT_PATH,ACCESS_FLAGS,"
            + "PATH_MIG_STATE",
        "RTR>RTS XRC_RECV TIMEOUT,SQ_PSN / CUR_STATE,ALT_PATH,ACCESS_FLAGS,MIN_RNR_TIMER,PATH_MIG_STATE",
        "RTS>RTS XRC_SEND / CUR_STATE,ACCESS_FLAGS,ALT_PATH,PATH_MIG_STATE",
        "RTS>RTS XRC_RECV / CUR_STATE,ACCESS_FLAGS,ALT_PATH,PATH_MIG_STATE,MIN_RNR_TIMER",
        "RTS>SQD XRC_SEND / EN_SQD_ASYNC_NOTIFY",
        "RTS>SQD XRC_RECV / EN_SQD_ASYNC_NOTIFY",
        "SQD>RTS XRC_SEND / CUR_STATE,ALT_PATH,ACCESS_FLAGS,PATH_MIG_STATE",
        "SQD>RTS XRC_RECV / CUR_STATE,ALT_PATH,ACCESS_FLAGS,MIN_RNR_TIMER,PATH_MIG_STATE",
        "SQD>SQD XRC_SEND / PORT,AV,TIMEOUT,RETRY_CNT,RNR_RETRY,MAX_QP_RD_ATOMIC,ALT_PATH,ACCESS_FLAGS,PKEY_INDEX,"
            + "PATH_MIG_STATE",
        "SQD>SQD XRC_RECV / PORT,AV,TIMEOUT,MAX_DEST_RD_ATOMIC,ALT_PATH,ACCESS_FLAGS,PKEY_INDEX,MIN_RNR_TIMER,"
            + "PATH_MIG_STATE");

    /** Transitions without attributes for any type (besides those above, which exist for every type). */
    private static final List<String> BARE = List.of("RESET>RESET", "INIT>RESET", "INIT>ERR", "RTR>RESET", "RTR>ERR",
        "RTS>RESET", "RTS>ERR", "SQD>RESET", "SQD>ERR", "SQE>RESET", "SQE>ERR", "SQE>RTS", "ERR>RESET", "ERR>ERR");

    private record Expect(Set<QpAttrMask> required, Set<QpAttrMask> optional)
    {
    }

    private static final Map<String, Expect> TABLE = table();

    private static Map<String, Expect> table()
    {
        final Map<String, Expect> t = new HashMap<>();
        for (final String bare : BARE)
        {
            for (final QpType type : QpType.values())
            {
                t.put(bare + " " + type, new Expect(Set.of(), Set.of()));
            }
        }
        for (final String row : ROWS)
        {
            final String[] halves = row.split("/", -1);
            final String[] head = halves[0].trim().split(" ");
            t.put(head[0] + " " + head[1], new Expect(parse(head.length > 2 ? head[2] : ""), parse(halves[1].trim())));
        }
        return t;
    }

    private static Set<QpAttrMask> parse(final String names)
    {
        final Set<QpAttrMask> out = EnumSet.noneOf(QpAttrMask.class);
        for (final String n : names.split(","))
        {
            if (!n.isBlank())
            {
                out.add(QpAttrMask.valueOf(n.trim()));
            }
        }
        return out;
    }

    /**
     * One call: a target state (or none: attributes in place), or, with advance, the next state of the usual path
     * (RESET, INIT, RTR, RTS, SQD, RTS) so that sequences reach the deeper states; extra mask bits; whether the
     * required ones are given.
     */
    record Call(QpState target, boolean advance, Set<QpAttrMask> extra, boolean fullRequired)
    {
    }

    private static QpState advance(final QpState s)
    {
        return switch (s)
        {
            case RESET -> QpState.INIT;
            case INIT -> QpState.RTR;
            case RTR, SQD, SQE -> QpState.RTS;
            case RTS -> QpState.SQD;
            case ERR -> QpState.RESET;
        };
    }

    @Provide
    Arbitrary<List<Call>> calls()
    {
        final Arbitrary<QpState> target = Arbitraries.of(QpState.values()).injectNull(0.05);
        final Arbitrary<Set<QpAttrMask>> extra = Arbitraries.of(QpAttrMask.class).set().ofMaxSize(3)
            .map(s -> s.isEmpty() ? EnumSet.noneOf(QpAttrMask.class) : EnumSet.copyOf(s))
            .map(s -> {
                s.remove(QpAttrMask.STATE);
                s.remove(QpAttrMask.CAP);
                return s;
            });
        final Arbitrary<Boolean> full = Arbitraries.of(true, true, true, false);
        final Arbitrary<Set<QpAttrMask>> few = Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(3, Arbitraries.just(EnumSet.noneOf(QpAttrMask.class))), net.jqwik.api.Tuple.of(1, extra));
        return Combinators.combine(target, Arbitraries.of(true, false), few, full).as(Call::new).list().ofMinSize(1)
            .ofMaxSize(25);
    }

    @Property(tries = 200)
    void everyModifyFollowsTheKernelsTable(@ForAll("calls") final List<Call> calls,
        @ForAll("types") final QpType type)
    {
        final RuleRig rig = RuleRig.unconnected(DeviceProfiles.connectx5());
        final QueuePair qp = type == QpType.XRC_RECV ? rig.ctxA.createXrcRecvQp(rig.ctxA.openXrcd())
            : type == QpType.XRC_SEND ? rig.pdA.createQp(QpInitAttr.xrcSend(rig.cqA))
            : rig.pdA.createQp(new QpInitAttr(rig.cqA, rig.cqA, type, QpCap.defaults(), false));
        for (final Call c : calls)
        {
            final QpState before = qp.state();
            net.jqwik.api.statistics.Statistics.label("state reached").collect(before);
            final QpState next = c.advance() ? advance(before) : c.target() == null ? before : c.target();
            final Expect e = TABLE.get(before + ">" + next + " " + type);
            final Set<QpAttrMask> mask = EnumSet.noneOf(QpAttrMask.class);
            if (c.advance() || c.target() != null)
            {
                mask.add(QpAttrMask.STATE);
            }
            if (e != null && c.fullRequired())
            {
                mask.addAll(e.required());
            }
            mask.addAll(c.extra());
            final boolean curStateOk = !mask.contains(QpAttrMask.CUR_STATE) || before == QpState.RTR
                || before == QpState.RTS || before == QpState.SQD || before == QpState.SQE;
            final boolean allowed = e != null && curStateOk && mask.containsAll(e.required())
                && allowedOnly(mask, e);
            final QpAttr snapshot = qp.query();
            final VerbsException refused = catchThrowableOfType(VerbsException.class,
                () -> qp.modify(values(rig, next, before), mask));
            if (allowed)
            {
                assertThat(refused).as(before + " -> " + next + " " + type + " with " + mask).isNull();
                assertThat(qp.state()).isEqualTo(next);
            }
            else
            {
                assertThat(refused).as(before + " -> " + next + " " + type + " with " + mask + " must fail").isNotNull();
                assertThat(refused.errnoName()).isEqualTo(Errno.EINVAL);
                assertThat(qp.query()).as("a refused call changes nothing").isEqualTo(snapshot);
            }
        }
    }

    @Provide
    Arbitrary<QpType> types()
    {
        return Arbitraries.of(QpType.values());
    }

    private static boolean allowedOnly(final Set<QpAttrMask> mask, final Expect e)
    {
        for (final QpAttrMask m : mask)
        {
            if (m != QpAttrMask.STATE && !e.required().contains(m) && !e.optional().contains(m))
            {
                return false;
            }
        }
        return true;
    }

    /** Valid values for every field, so that only the mask decides. */
    private static QpAttr values(final RuleRig rig, final QpState next, final QpState cur)
    {
        return new QpAttr(next, cur, EnumSet.of(Access.REMOTE_WRITE), 0, 1, 0x1234,
            AhAttr.toGid(rig.deviceB.gid()), QpAttr.MTU_4096, 14, 7, 7, 1, 2, 1, 1, 12, 0x42, false);
    }
}
