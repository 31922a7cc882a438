/* The provider's part of a QP's move to RESET: mlx4 and mlx5 remove the QP's completions not yet polled from its send
 * and receive CQs once the kernel command succeeded (mlx4_modify_qp calling mlx4_cq_clean, mlx5_modify_qp calling
 * mlx5_cq_clean), so a program that resets a QP after an error and connects it again does not poll the flushed
 * completions of its earlier life. rxe and siw keep their CQs in the kernel, which leaves them as they are. */
#include "rnicsim_verbs.h"

/* Removes the completions of qp_num from cq's ring, keeping the order of the others. */
static void clean(struct sim_cq *cq, uint32_t qp_num)
{
	unsigned kept = 0;
	for (unsigned i = 0; i < cq->count; i++) {
		struct ibv_wc *wc = &cq->ring[(cq->head + i) % cq->cap];
		if (wc->qp_num == qp_num)
			continue;
		if (kept != i)
			cq->ring[(cq->head + kept) % cq->cap] = *wc;
		kept++;
	}
	cq->count = kept;
}

void rnicsim_reset_clean_cqs(struct sim_qp *q)
{
	if (!(q->post_rules & WIRE_POST_RESET_CLEANS_CQ))
		return;
	struct ibv_qp *qp = &q->qpx.qp_base;
	rnicsim_lock();
	if (qp->recv_cq)
		clean((struct sim_cq *)qp->recv_cq, qp->qp_num);
	if (qp->send_cq && qp->send_cq != qp->recv_cq)
		clean((struct sim_cq *)qp->send_cq, qp->qp_num);
	rnicsim_unlock();
}
