package dev.rnicsim.simnic;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The numbers a device gives its objects and the count of each kind live, against its {@code max_pd},
 * {@code max_cq}, {@code max_qp} and {@code max_srq}: the driver's object pools (rxe's rxe_pool.c numbers each object
 * of a pool and refuses one past the pool's limit; mlx5's firmware hands out the QP numbers). QP numbers are 24 bits,
 * never 0 or 1 (the special QPs), never one live.
 *
 * <p>Not thread safe: part of one {@link SimDevice}.
 */
final class DeviceObjects
{
    /** QP numbers are 24 bits wide (IBA 9.6.1: the BTH's DestQP). */
    private static final int QPN_MASK = 0xffffff;
    /** QP 0 and QP 1 are the special QPs (SMI, GSI): never handed out. */
    private static final int FIRST_ORDINARY_QPN = 2;
    /** How many destroyed QPs a device remembers for diagnoses. */
    private static final int DESTROYED_KEPT = 64;

    private final Map<Integer, SimQp> qps = new HashMap<>();
    /**
     * The QPs destroyed last, by number (at most {@value #DESTROYED_KEPT}, the oldest dropped first), so that a
     * requester whose peer was destroyed before it ever sent to it is told so rather than that no QP is there.
     */
    private final Map<Integer, SimQp> destroyed = new LinkedHashMap<>();
    private int nextPdNum = 1;
    private int nextSrqNum = 1;
    private int nextQpNum;
    /** True once a QP has been created here: the numbering's start no longer moves. */
    private boolean qpNumbered;
    private int pdsLive;
    private int cqsLive;
    private int srqsLive;

    /** @param firstQpNum where the QP numbers start (see SimFabric#firstQpNum). */
    DeviceObjects(final int firstQpNum)
    {
        this.nextQpNum = firstQpNum;
    }

    /** @return the next PD number of this device. */
    int allocPdNum()
    {
        return nextPdNum++;
    }

    /** @return the next SRQ number of this device ({@code ibv_get_srq_num}). */
    int allocSrqNum()
    {
        return nextSrqNum++;
    }

    int pdsLive()
    {
        return pdsLive;
    }

    void pdsLive(final int delta)
    {
        pdsLive += delta;
    }

    int cqsLive()
    {
        return cqsLive;
    }

    void cqsLive(final int delta)
    {
        cqsLive += delta;
    }

    /** @return SRQs live on this device, against max_srq. */
    int srqsLive()
    {
        return srqsLive;
    }

    void srqsLive(final int delta)
    {
        srqsLive += delta;
    }

    int qpsLive()
    {
        return qps.size();
    }

    /** Takes the next free 24-bit QP number, skipping live ones and the special QPs 0 and 1. */
    int addQp(final SimQp qp)
    {
        while (nextQpNum < FIRST_ORDINARY_QPN || qps.containsKey(nextQpNum))
        {
            nextQpNum = (nextQpNum + 1) & QPN_MASK;
        }
        final int num = nextQpNum;
        nextQpNum = (nextQpNum + 1) & QPN_MASK;
        qps.put(num, qp);
        destroyed.remove(num);
        qpNumbered = true;
        return num;
    }

    /** Starts the QP numbers at {@code qpNum} unless a QP was created here already (see SimFabric#firstQpNum). */
    void firstQpNum(final int qpNum)
    {
        if (!qpNumbered)
        {
            nextQpNum = qpNum;
        }
    }

    void removeQp(final int qpNum)
    {
        final SimQp gone = qps.remove(qpNum);
        if (gone != null)
        {
            destroyed.put(qpNum, gone);
            if (destroyed.size() > DESTROYED_KEPT)
            {
                destroyed.remove(destroyed.keySet().iterator().next());
            }
        }
    }

    /** @return the QP of this number destroyed last, if it is among those remembered and none took its number since. */
    SimQp destroyedQp(final int qpNum)
    {
        return destroyed.get(qpNum);
    }

    SimQp qp(final int qpNum)
    {
        return qps.get(qpNum);
    }

    /** @return the live QPs, by QP number. */
    List<SimQp> queuePairs()
    {
        final List<SimQp> out = new ArrayList<>(qps.values());
        out.sort(Comparator.comparingInt(SimQp::qpNum));
        return out;
    }
}
