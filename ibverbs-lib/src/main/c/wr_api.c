/*
 * ibv_wr_* (the extended post API of ibv_qp_ex that perftest uses): work requests are collected in the QP, one
 * ibv_send_wr each, and posted by ibv_wr_complete through ibv_post_send's path, so they meet the same checks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

static struct sim_qp *of(struct ibv_qp_ex *qpx)
{
	return (struct sim_qp *)qpx;
}

/* The reason of the error ibv_wr_complete is to answer, for strict mode's report (rnicsim_report_refusal). */
static __thread char qpx_why[256];

static void fail(struct ibv_qp_ex *qpx, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct ibv_qp_ex *qpx, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(qpx_why, sizeof(qpx_why), fmt, ap);
	va_end(ap);
	of(qpx)->qpx_error = err;
}

static struct ibv_send_wr *next_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct sim_qp *q = of(qpx);
	if (q->nwr == QPX_MAX_WR) {
		fail(qpx, ENOMEM, "more than %d work requests between ibv_wr_start and ibv_wr_complete on QP 0x%x; fix: "
		     "complete the batch and start another", QPX_MAX_WR, qpx->qp_base.qp_num);
		return NULL;
	}
	unsigned i = q->nwr++;
	struct ibv_send_wr *w = &q->wrs[i];
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->send_flags = qpx->wr_flags;
	w->opcode = op;
	w->sg_list = q->sges[i];
	return w;
}

static struct ibv_send_wr *last_wr(struct ibv_qp_ex *qpx)
{
	struct sim_qp *q = of(qpx);
	return q->nwr ? &q->wrs[q->nwr - 1] : NULL;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	of(qpx)->nwr = 0;
	of(qpx)->qpx_error = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct sim_qp *q = of(qpx);
	int e = q->qpx_error;
	if (e && rnicsim_strict())
		rnicsim_report_refusal("ibv_wr_complete", e, qpx_why);
	if (!e && q->nwr) {
		for (unsigned i = 0; i + 1 < q->nwr; i++)
			q->wrs[i].next = &q->wrs[i + 1];
		q->wrs[q->nwr - 1].next = NULL;
		struct ibv_send_wr *bad;
		e = rnicsim_post_send_as(&qpx->qp_base, &q->wrs[0], &bad, "ibv_wr_complete");
	}
	q->nwr = 0;
	q->qpx_error = 0;
	return e;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	of(qpx)->nwr = 0;
	of(qpx)->qpx_error = 0;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_RDMA_WRITE);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
	}
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
		w->imm_data = imm;
	}
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_RDMA_READ);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
	}
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	next_wr(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_SEND_WITH_IMM);
	if (w)
		w->imm_data = imm;
}

static void wr_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);
	if (w) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = compare;
		w->wr.atomic.swap = swap;
	}
}

static void wr_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);
	if (w) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = add;
	}
}

/* An operation the simulated device does not execute: ibv_wr_complete answers EOPNOTSUPP and posts nothing. */
static void wr_unsupported(struct ibv_qp_ex *qpx)
{
	fail(qpx, EOPNOTSUPP, "a work request of QP 0x%x uses an operation the simulated device does not execute "
	     "(TSO is for raw packet and IPoIB UD QPs); fix: post it on a device that offers it", qpx->qp_base.qp_num);
}

/* ibv_wr_local_inv(3): the LOCAL_INV work request of ibv_post_send, with the key in invalidate_rkey. */
static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_LOCAL_INV);
	if (w)
		w->invalidate_rkey = rkey;
}

/* ibv_wr_send_inv(3): a SEND_WITH_INV that invalidates rkey at the responder. */
static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_SEND_WITH_INV);
	if (w)
		w->invalidate_rkey = rkey;
}

/* ibv_wr_bind_mw(3): the BIND_MW work request of a type 2 window (bind_mw.mw, bind_mw.rkey, bind_info). */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_BIND_MW);
	if (!w)
		return;
	if (!mw || !info) {
		fail(qpx, EINVAL, "ibv_wr_bind_mw on QP 0x%x was given no %s; fix: pass the type 2 window and its "
		     "ibv_mw_bind_info", qpx->qp_base.qp_num, !mw ? "window (mw is NULL)" : "bind_info (NULL)");
		return;
	}
	w->bind_mw.mw = mw;
	w->bind_mw.rkey = rkey;
	w->bind_mw.bind_info = *info;
}

/* ibv_wr_set_ud_addr(3): the destination of the last UD work request (wr.ud of ibv_post_send). */
static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	w->wr.ud.ah = ah;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

/* ibv_wr_send_tso(3): TSO is for raw packet and IPoIB UD QPs, which the simulated device does not offer. */
static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	wr_unsupported(qpx);
}

/* ibv_wr_atomic_write(3): the 8 bytes at atomic_wr, as they lie in memory, travel in compare_add. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *atomic_wr)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_ATOMIC_WRITE);
	if (!w)
		return;
	w->wr.atomic.remote_addr = addr;
	w->wr.atomic.rkey = rkey;
	memcpy(&w->wr.atomic.compare_add, atomic_wr, sizeof(w->wr.atomic.compare_add));
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	w->sg_list[0] = (struct ibv_sge){.addr = addr, .length = length, .lkey = lkey};
	w->num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list)
{
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	if (n > QPX_MAX_SGE) {
		fail(qpx, EINVAL, "ibv_wr_set_sge_list on QP 0x%x was given %zu SGEs, above the %d a work request of "
		     "this library holds; fix: split the gather list", qpx->qp_base.qp_num, n, QPX_MAX_SGE);
		return;
	}
	memcpy(w->sg_list, list, n * sizeof(*list));
	w->num_sge = n;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs)
{
	struct sim_qp *q = of(qpx);
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += bufs[i].length;
	unsigned i = q->nwr - 1;
	char *b = realloc(q->inline_bufs[i], len ? len : 1);
	q->inline_bufs[i] = b;
	size_t off = 0;
	for (size_t k = 0; k < n; k++) {
		memcpy(b + off, bufs[k].addr, bufs[k].length);
		off += bufs[k].length;
	}
	w->sg_list[0] = (struct ibv_sge){.addr = (uintptr_t)b, .length = (uint32_t)len, .lkey = 0};
	w->num_sge = 1;
	w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};
	wr_set_inline_data_list(qpx, 1, &b);
}

void rnicsim_set_qpx_ops(struct sim_qp *q)
{
	struct ibv_qp_ex *x = &q->qpx;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_atomic_cmp_swp = wr_cmp_swp;
	x->wr_atomic_fetch_add = wr_fetch_add;
	x->wr_local_inv = wr_local_inv;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_send_tso = wr_send_tso;
	x->wr_atomic_write = wr_atomic_write;
}
