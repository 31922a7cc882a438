/*
 * The errno a provider gives at post time, before any work request reaches the device: the QP's state, the opcode,
 * the SGE count, a full send or receive queue, the inline size. The limits are those the device granted at
 * ibv_create_qp (q->cap); where providers differ (mlx5 against rxe) the device profile's post rules (q->post_rules,
 * WIRE_POST_*) say which answer this device gives. Each refusal leaves its reason (the rule, the values, the fix)
 * for strict mode's report (rnicsim_post_why).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "rnicsim_verbs.h"

static __thread char why[512];

const char *rnicsim_post_why(void) { return why; }

static int refuse(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return err;
}

static const char *state_name(enum ibv_qp_state s)
{
	static const char *names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "an unknown state";
}

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
		return refuse(EINVAL, "QP 0x%x is in %s: its send queue takes work requests from RTS on; fix: move it "
			      "to RTS (INIT, RTR, RTS) before ibv_post_send", q->qpx.qp_base.qp_num,
			      state_name(q->qpx.qp_base.state)); /* a send queue takes work from RTS on */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE && !(q->post_rules & WIRE_POST_ATOMIC_WRITE))
		return refuse(EOPNOTSUPP, "IBV_WR_ATOMIC_WRITE on QP 0x%x: only an RC QP of a device with "
			      "IBV_DEVICE_ATOMIC_WRITE (rxe) executes it; fix: use an RDMA WRITE of 8 bytes",
			      q->qpx.qp_base.qp_num); /* only an RC QP of a device with IBV_DEVICE_ATOMIC_WRITE (rxe) */
	if (!supported(wr->opcode) && wr->opcode != IBV_WR_ATOMIC_WRITE)
		return refuse(EINVAL, "opcode %d of wr_id %llu is no ibv_wr_opcode this provider's ibv_post_send takes; "
			      "fix: use an IBV_WR_* opcode of ibv_post_send (TSO and the ibv_wr_* only ones through "
			      "ibv_wr_start)", (int)wr->opcode, (unsigned long long)wr->wr_id);
	/* mlx5 compares num_sge with its int max_gs: a negative count passes and no SGE is read (post_send sends it
	 * with none); librxe's unsigned max_sge makes it huge: EINVAL */
	if (wr->num_sge < 0 && !(q->post_rules & WIRE_POST_SGE_COUNT_SIGNED))
		return refuse(EINVAL, "wr_id %llu has num_sge %d, above max_send_sge %u of QP 0x%x as an unsigned count; "
			      "fix: give num_sge 0 .. max_send_sge", (unsigned long long)wr->wr_id, wr->num_sge,
			      q->cap.max_send_sge, q->qpx.qp_base.qp_num);
	if (wr->num_sge > 0 && (unsigned)wr->num_sge > q->cap.max_send_sge)
		return refuse((q->post_rules & WIRE_POST_SGE_OVERFLOW_ENOMEM) ? ENOMEM : EINVAL, /* mlx5: ENOMEM; rxe */
			      "wr_id %llu has num_sge %d > max_send_sge %u that QP 0x%x was granted; fix: split the "
			      "gather list, or create the QP with a larger cap.max_send_sge",
			      (unsigned long long)wr->wr_id, wr->num_sge, q->cap.max_send_sge, q->qpx.qp_base.qp_num);
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		if ((q->post_rules & WIRE_POST_ATOMIC_ALIGNMENT) && (wr->wr.atomic.remote_addr & 7))
			return refuse(EINVAL, "the atomic wr_id %llu targets remote_addr 0x%llx, not 8-byte aligned; "
				      "fix: align the target of an atomic to 8 bytes", (unsigned long long)wr->wr_id,
				      (unsigned long long)wr->wr.atomic.remote_addr);
		if (q->post_rules & WIRE_POST_ATOMICS_DISABLED)
			return refuse(EOPNOTSUPP, "the atomic wr_id %llu on QP 0x%x: the device's atomic_cap is not "
				      "IBV_ATOMIC_HCA, so its provider posts no atomic; fix: check atomic_cap "
				      "(ibv_query_device) before using atomics", (unsigned long long)wr->wr_id,
				      q->qpx.qp_base.qp_num);
	}
	if (q->outstanding_sends + queued >= q->cap.max_send_wr) /* the provider's work queue overflow */
		return refuse(ENOMEM, "the send queue of QP 0x%x is full: %u work requests not yet completed, max_send_wr "
			      "%u; fix: poll the send CQ before posting more (unsignaled requests retire only with a "
			      "later signaled one), or create the QP with a larger cap.max_send_wr",
			      q->qpx.qp_base.qp_num, q->outstanding_sends + queued, q->cap.max_send_wr);
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t len = 0;
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		/* ENOMEM on mlx5, EINVAL on rxe; compared as libmlx5's int max_inline_data, whose -4 (a send WQE of its
		 * segments alone, 4294967292 in attr->cap) refuses every inline post */
		if ((long long)len > (long long)(int)q->cap.max_inline_data)
			return refuse(q->cap.pad ? (int)q->cap.pad : EINVAL, "wr_id %llu sends %llu bytes inline, above "
				      "max_inline_data %u that QP 0x%x was granted; fix: send it from a registered "
				      "buffer without IBV_SEND_INLINE, or create the QP with a larger cap.max_inline_data",
				      (unsigned long long)wr->wr_id, (unsigned long long)len, q->cap.max_inline_data,
				      q->qpx.qp_base.qp_num);
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
		return refuse(ENOMEM, "XRC QP 0x%x has no receive queue (0 entries); fix: post receives to the XRC SRQ "
			      "with ibv_post_srq_recv", q->qpx.qp_base.qp_num);
	/* a negative num_sge: mlx5_post_recv's signed compare lets it through with no SGE, librxe's unsigned
	 * max_sge refuses it */
	if (q->qpx.qp_base.state == IBV_QPS_RESET)
		return refuse(EINVAL, "QP 0x%x is in RESET, which takes no receive; fix: move it to INIT first",
			      q->qpx.qp_base.qp_num);
	/* before the SGEs: mlx4/mlx5 report 0 max_recv_sge for such a QP and find its 0 entries full first */
	if (q->qpx.qp_base.srq) /* its receives come from the SRQ: mlx4/mlx5 gave it 0 entries, rxe refuses */
		return refuse((q->post_rules & WIRE_POST_RECV_SRQ_ENOMEM) ? ENOMEM : EINVAL,
			      "QP 0x%x takes its receives from an SRQ and has no receive queue of its own; fix: post "
			      "receives to the SRQ with ibv_post_srq_recv", q->qpx.qp_base.qp_num);
	if ((w->num_sge > 0 && (unsigned)w->num_sge > q->cap.max_recv_sge) ||
	    (w->num_sge < 0 && !(q->post_rules & WIRE_POST_SGE_COUNT_SIGNED)))
		return refuse(EINVAL, "receive wr_id %llu has num_sge %d > max_recv_sge %u that QP 0x%x was granted; "
			      "fix: give num_sge 0 .. max_recv_sge, or create the QP with a larger cap.max_recv_sge",
			      (unsigned long long)w->wr_id, w->num_sge, q->cap.max_recv_sge, q->qpx.qp_base.qp_num);
	if (q->outstanding_recvs + queued >= q->cap.max_recv_wr)
		return refuse(ENOMEM, "the receive queue of QP 0x%x is full: %u receives not yet completed, max_recv_wr "
			      "%u; fix: poll the receive CQ before posting more, or create the QP with a larger "
			      "cap.max_recv_wr", q->qpx.qp_base.qp_num, q->outstanding_recvs + queued,
			      q->cap.max_recv_wr);
	return 0;
}
