package dev.rnicsim.testkit;

import dev.rnicsim.simnic.DeviceProfile;
import dev.rnicsim.simnic.DriverTraits;
import dev.rnicsim.testkit.TestNic.Side;
import dev.rnicsim.verbs.Access;
import dev.rnicsim.verbs.CompletionQueue;
import dev.rnicsim.verbs.ProtectionDomain;
import dev.rnicsim.verbs.QpCap;
import dev.rnicsim.verbs.QpInitAttr;
import dev.rnicsim.verbs.QpState;
import dev.rnicsim.verbs.QpType;
import dev.rnicsim.verbs.QueuePair;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;

/**
 * The RC queue pair a {@link TestNic} keeps connected between its two sides: one QP per side on that side's PD and
 * CQ, each granting the fixture's remote rights to its peer. After a failed work request both QPs are in the error
 * state, as on real hardware; the pair is then replaced by a new connected one. On a profile whose driver creates no
 * RC QP (EFA) there is no pair, and {@link #qp} says why.
 *
 * <p>Not thread safe (nor is the simulator).
 */
final class QpPair
{
    private final DeviceProfile profile;
    private final Set<Access> qpAccess;
    private final Map<Side, ProtectionDomain> pds;
    private final Map<Side, CompletionQueue> cqs;
    private final Map<Side, QueuePair> qps = new EnumMap<>(Side.class);
    private int reconnects;

    /**
     * Connects the first pair.
     *
     * @param profile  both devices' profile (whether its driver has RC QPs, its max_sge).
     * @param qpAccess what each QP lets its peer do ({@code qp_access_flags}).
     * @param pds      each side's PD.
     * @param cqs      each side's CQ, for both the send and the receive queue.
     */
    QpPair(final DeviceProfile profile, final Set<Access> qpAccess, final Map<Side, ProtectionDomain> pds,
        final Map<Side, CompletionQueue> cqs)
    {
        this.profile = profile;
        this.qpAccess = qpAccess;
        this.pds = pds;
        this.cqs = cqs;
        connect();
    }

    /**
     * @param side a side.
     * @return its QP now.
     * @throws IllegalStateException when the profile's driver has no RC QPs (EFA), so the fixture has none.
     */
    QueuePair qp(final Side side)
    {
        final QueuePair qp = qps.get(side);
        if (qp == null)
        {
            final DriverTraits t = profile.traits();
            throw new IllegalStateException("no QP on profile " + profile.name() + ": the " + t.driver()
                + " driver's create_qp accepts " + t.qpTypes() + " QPs only, an RC QP is EOPNOTSUPP (" + t.source()
                + "), and this fixture connects RC QPs; registrations work, work requests need a profile with RC QPs"
                + " (connectx5, rxe, ...)");
        }
        return qp;
    }

    /**
     * @return how many times the pair was replaced.
     */
    int reconnects()
    {
        return reconnects;
    }

    /**
     * Replaces the pair with a new connected one when either QP left RTS (after a failed work request).
     *
     * @throws IllegalStateException when the fixture has no QPs ({@link #qp}).
     */
    void ensureConnected()
    {
        if (qp(Side.A).state() != QpState.RTS || qp(Side.B).state() != QpState.RTS)
        {
            reconnect();
        }
    }

    /**
     * Destroys both QPs and connects a new pair (completions waiting in the CQs are dropped).
     *
     * @throws IllegalStateException when the fixture has no QPs ({@link #qp}).
     */
    void reconnect()
    {
        qp(Side.A);
        for (final Side s : Side.values())
        {
            qps.get(s).close();
            cqs.get(s).poll(Integer.MAX_VALUE);
        }
        reconnects++;
        connect();
    }

    private void connect()
    {
        if (!profile.traits().acceptsQpType(QpType.RC))
        {
            return;
        }
        // default capacities, with the SGEs cut to the device's max_sge (EFA has 2, a generic device 1)
        final QpCap d = QpCap.defaults();
        final int sge = Math.min(d.maxSendSge(), profile.attributes().maxSge());
        final QpCap cap = new QpCap(d.maxSendWr(), d.maxRecvWr(), sge, sge, d.maxInlineDataBytes());
        for (final Side s : Side.values())
        {
            qps.put(s, pds.get(s).createQp(new QpInitAttr(cqs.get(s), cqs.get(s), QpType.RC, cap, false)));
        }
        qps.get(Side.A).connect(qps.get(Side.B).address(), qpAccess);
        qps.get(Side.B).connect(qps.get(Side.A).address(), qpAccess);
    }
}
