/*
 * The errno a provider gives at post time, before any work request reaches the device: the QP's state, the opcode,
 * the SGE count, a full send or receive queue, the inline size. The limits are those the device granted at
 * ibv_create_qp (q->cap); where providers differ (mlx5 against rxe) the device profile's post rules (q->post_rules,
 * WIRE_POST_*) say which answer this device gives.
 */
#include <errno.h>

#include "rnicsim_verbs.h"

static int supported(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_BIND_MW:
		return 1;
	default:
		return 0;
	}
}

/* The errno of one send work request, queued after `queued` others of the same ibv_post_send; 0 when it may go. */
int rnicsim_check_send(struct sim_qp *q, struct ibv_send_wr *wr, unsigned queued)
{
	if (q->qpx.qp_base.state < IBV_QPS_RTS && q->qpx.qp_base.state != IBV_QPS_ERR)
		return EINVAL; /* a send queue takes work from RTS on */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE && !(q->post_rules & WIRE_POST_ATOMIC_WRITE))
		return EOPNOTSUPP; /* only an RC QP of a device with IBV_DEVICE_ATOMIC_WRITE (rxe) executes it */
	if (!supported(wr->opcode) && wr->opcode != IBV_WR_ATOMIC_WRITE)
		return EINVAL;
	/* mlx5 compares num_sge with its int max_gs: a negative count passes and no SGE is read (post_send sends it
	 * with none); librxe's unsigned max_sge makes it huge: EINVAL */
	if (wr->num_sge < 0 && !(q->post_rules & WIRE_POST_SGE_COUNT_SIGNED))
		return EINVAL;
	if (wr->num_sge > 0 && (unsigned)wr->num_sge > q->cap.max_send_sge)
		return (q->post_rules & WIRE_POST_SGE_OVERFLOW_ENOMEM) ? ENOMEM : EINVAL; /* mlx5: ENOMEM; rxe: EINVAL */
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		if ((q->post_rules & WIRE_POST_ATOMIC_ALIGNMENT) && (wr->wr.atomic.remote_addr & 7))
			return EINVAL;
		if (q->post_rules & WIRE_POST_ATOMICS_DISABLED)
			return EOPNOTSUPP;
	}
	if (q->outstanding_sends + queued >= q->cap.max_send_wr)
		return ENOMEM; /* send queue full: the provider's work queue overflow */
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t len = 0;
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > q->cap.max_inline_data)
			return q->cap.pad ? (int)q->cap.pad : EINVAL; /* ENOMEM on mlx5, EINVAL on rxe */
	}
	return 0;
}

/* The errno of one receive work request, queued after `queued` others of the same ibv_post_recv; 0 when it may go. */
int rnicsim_check_recv(struct sim_qp *q, struct ibv_recv_wr *w, unsigned queued)
{
	/* rxe's and mlx5's post_recv: a QP in RESET takes no receive (EINVAL, as rdma-core's tests/utils.py
	 * post_rq_state_bad_flow expects), more SGEs than max_recv_sge are EINVAL, and a receive queue holding
	 * max_recv_wr receives not yet completed overflows (ENOMEM: mlx5_wq_overflow, rxe's queue_full) */
	/* neither XRC QP has a receive queue (uverbs create_qp gives XRC_INI max_recv_wr 0, XRC_TGT none):
	 * past RESET, mlx5_post_recv finds its 0 entries full before it counts SGEs (mlx5_wq_overflow):
	 * ENOMEM, as the model answers (XrcRules.recvRefusal); rxe has no XRC QPs */
	if ((q->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND || q->qpx.qp_base.qp_type == IBV_QPT_XRC_RECV) &&
	    q->qpx.qp_base.state != IBV_QPS_RESET)
		return ENOMEM;
	/* a negative num_sge: mlx5_post_recv's signed compare lets it through with no SGE, librxe's unsigned
	 * max_sge refuses it */
	if ((w->num_sge > 0 && (unsigned)w->num_sge > q->cap.max_recv_sge) ||
	    (w->num_sge < 0 && !(q->post_rules & WIRE_POST_SGE_COUNT_SIGNED)) ||
	    q->qpx.qp_base.state == IBV_QPS_RESET)
		return EINVAL;
	if (q->qpx.qp_base.srq) /* its receives come from the SRQ: mlx4/mlx5 gave it 0 entries, rxe refuses */
		return (q->post_rules & WIRE_POST_RECV_SRQ_ENOMEM) ? ENOMEM : EINVAL;
	if (q->outstanding_recvs + queued >= q->cap.max_recv_wr)
		return ENOMEM;
	return 0;
}
