package dev.rnicsim.verbs;

import java.util.EnumSet;
import java.util.Set;

/**
 * The attributes of a queue pair ({@code struct ibv_qp_attr}), as {@code ibv_modify_qp} takes them with a
 * {@link QpAttrMask} naming the fields it sets, and as {@code ibv_query_qp} returns them. Build one with
 * {@link #builder()}, whose {@link Builder#mask()} is the set of fields given.
 *
 * @param qpState         qp_state: the new state (modify) or the current one (query).
 * @param curQpState      cur_qp_state.
 * @param qpAccessFlags   qp_access_flags: what remote peers may do through this QP.
 * @param pkeyIndex       pkey_index.
 * @param portNum         port_num.
 * @param qkey            qkey (UD).
 * @param ahAttr          ah_attr: the primary path (null when none is set).
 * @param pathMtu         path_mtu as {@code enum ibv_mtu}: 1 = 256, 2 = 512, 3 = 1024, 4 = 2048, 5 = 4096 bytes.
 * @param timeout         the local ACK timeout code (0 to 31).
 * @param retryCnt        retry_cnt (0 to 7).
 * @param rnrRetry        rnr_retry (0 to 7; 7 = retry forever).
 * @param rqPsn           rq_psn (24 bits).
 * @param sqPsn           sq_psn (24 bits).
 * @param maxRdAtomic     max_rd_atomic: READs and atomics outstanding as initiator.
 * @param maxDestRdAtomic max_dest_rd_atomic: READs and atomics answered at once as responder.
 * @param minRnrTimer     min_rnr_timer code (0 to 31).
 * @param destQpNum       dest_qp_num (24 bits).
 * @param sqDraining      sq_draining (query only).
 */
public record QpAttr(QpState qpState, QpState curQpState, Set<Access> qpAccessFlags, int pkeyIndex, int portNum,
    int qkey, AhAttr ahAttr, int pathMtu, int timeout, int retryCnt, int rnrRetry, int rqPsn, int sqPsn,
    int maxRdAtomic, int maxDestRdAtomic, int minRnrTimer, int destQpNum, boolean sqDraining)
{
    /** IBV_MTU_4096. */
    public static final int MTU_4096 = 5;

    /**
     * Copies the access set (an unmodifiable view of an EnumSet copy: in the flags' order, and cheap to read).
     */
    public QpAttr
    {
        qpAccessFlags = qpAccessFlags == null || qpAccessFlags.isEmpty() ? Set.of()
            : java.util.Collections.unmodifiableSet(EnumSet.copyOf(qpAccessFlags));
    }

    /**
     * @param code an {@code enum ibv_mtu} value, 1 to 5.
     * @return its size in bytes (256 to 4096), or 0 for a code outside 1..5.
     */
    public static int mtuBytes(final int code)
    {
        return code >= 1 && code <= 5 ? 128 << code : 0;
    }

    /**
     * @return an empty builder.
     */
    public static Builder builder()
    {
        return new Builder();
    }

    /**
     * Collects the fields of an {@code ibv_modify_qp} call and, in {@link #mask()}, which ones were given. Not thread
     * safe.
     */
    public static final class Builder
    {
        private final EnumSet<QpAttrMask> mask = EnumSet.noneOf(QpAttrMask.class);
        private QpState qpState = QpState.RESET;
        private QpState curQpState = QpState.RESET;
        private Set<Access> qpAccessFlags = Set.of();
        private int pkeyIndex;
        private int portNum;
        private int qkey;
        private AhAttr ahAttr;
        private int pathMtu;
        private int timeout;
        private int retryCnt;
        private int rnrRetry;
        private int rqPsn;
        private int sqPsn;
        private int maxRdAtomic;
        private int maxDestRdAtomic;
        private int minRnrTimer;
        private int destQpNum;

        private Builder()
        {
        }

        /**
         * @param v the new state (IBV_QP_STATE).
         * @return this.
         */
        public Builder state(final QpState v)
        {
            qpState = v;
            mask.add(QpAttrMask.STATE);
            return this;
        }

        /**
         * @param v the state the caller believes the QP is in (IBV_QP_CUR_STATE).
         * @return this.
         */
        public Builder curState(final QpState v)
        {
            curQpState = v;
            mask.add(QpAttrMask.CUR_STATE);
            return this;
        }

        /**
         * @param v qp_access_flags (IBV_QP_ACCESS_FLAGS).
         * @return this.
         */
        public Builder accessFlags(final Set<Access> v)
        {
            qpAccessFlags = v;
            mask.add(QpAttrMask.ACCESS_FLAGS);
            return this;
        }

        /**
         * @param v pkey_index (IBV_QP_PKEY_INDEX).
         * @return this.
         */
        public Builder pkeyIndex(final int v)
        {
            pkeyIndex = v;
            mask.add(QpAttrMask.PKEY_INDEX);
            return this;
        }

        /**
         * @param v port_num (IBV_QP_PORT).
         * @return this.
         */
        public Builder port(final int v)
        {
            portNum = v;
            mask.add(QpAttrMask.PORT);
            return this;
        }

        /**
         * @param v qkey (IBV_QP_QKEY).
         * @return this.
         */
        public Builder qkey(final int v)
        {
            qkey = v;
            mask.add(QpAttrMask.QKEY);
            return this;
        }

        /**
         * @param v ah_attr (IBV_QP_AV).
         * @return this.
         */
        public Builder av(final AhAttr v)
        {
            ahAttr = v;
            mask.add(QpAttrMask.AV);
            return this;
        }

        /**
         * @param v path_mtu as {@code enum ibv_mtu} (IBV_QP_PATH_MTU).
         * @return this.
         */
        public Builder pathMtu(final int v)
        {
            pathMtu = v;
            mask.add(QpAttrMask.PATH_MTU);
            return this;
        }

        /**
         * @param v the local ACK timeout code (IBV_QP_TIMEOUT).
         * @return this.
         */
        public Builder timeout(final int v)
        {
            timeout = v;
            mask.add(QpAttrMask.TIMEOUT);
            return this;
        }

        /**
         * @param v retry_cnt (IBV_QP_RETRY_CNT).
         * @return this.
         */
        public Builder retryCnt(final int v)
        {
            retryCnt = v;
            mask.add(QpAttrMask.RETRY_CNT);
            return this;
        }

        /**
         * @param v rnr_retry (IBV_QP_RNR_RETRY).
         * @return this.
         */
        public Builder rnrRetry(final int v)
        {
            rnrRetry = v;
            mask.add(QpAttrMask.RNR_RETRY);
            return this;
        }

        /**
         * @param v rq_psn (IBV_QP_RQ_PSN).
         * @return this.
         */
        public Builder rqPsn(final int v)
        {
            rqPsn = v;
            mask.add(QpAttrMask.RQ_PSN);
            return this;
        }

        /**
         * @param v sq_psn (IBV_QP_SQ_PSN).
         * @return this.
         */
        public Builder sqPsn(final int v)
        {
            sqPsn = v;
            mask.add(QpAttrMask.SQ_PSN);
            return this;
        }

        /**
         * @param v max_rd_atomic (IBV_QP_MAX_QP_RD_ATOMIC).
         * @return this.
         */
        public Builder maxRdAtomic(final int v)
        {
            maxRdAtomic = v;
            mask.add(QpAttrMask.MAX_QP_RD_ATOMIC);
            return this;
        }

        /**
         * @param v max_dest_rd_atomic (IBV_QP_MAX_DEST_RD_ATOMIC).
         * @return this.
         */
        public Builder maxDestRdAtomic(final int v)
        {
            maxDestRdAtomic = v;
            mask.add(QpAttrMask.MAX_DEST_RD_ATOMIC);
            return this;
        }

        /**
         * @param v min_rnr_timer (IBV_QP_MIN_RNR_TIMER).
         * @return this.
         */
        public Builder minRnrTimer(final int v)
        {
            minRnrTimer = v;
            mask.add(QpAttrMask.MIN_RNR_TIMER);
            return this;
        }

        /**
         * @param v dest_qp_num (IBV_QP_DEST_QPN).
         * @return this.
         */
        public Builder destQpNum(final int v)
        {
            destQpNum = v;
            mask.add(QpAttrMask.DEST_QPN);
            return this;
        }

        /**
         * Adds a mask bit without a value of its own (ALT_PATH, PATH_MIG_STATE, EN_SQD_ASYNC_NOTIFY, CAP), or forces
         * one whose field keeps its default.
         *
         * @param m the bit.
         * @return this.
         */
        public Builder with(final QpAttrMask m)
        {
            mask.add(m);
            return this;
        }

        /**
         * @return the fields given so far.
         */
        public Set<QpAttrMask> mask()
        {
            return EnumSet.copyOf(mask);
        }

        /**
         * @return the attributes.
         */
        public QpAttr build()
        {
            return new QpAttr(qpState, curQpState, qpAccessFlags, pkeyIndex, portNum, qkey, ahAttr, pathMtu, timeout,
                retryCnt, rnrRetry, rqPsn, sqPsn, maxRdAtomic, maxDestRdAtomic, minRnrTimer, destQpNum, false);
        }
    }
}
