/*
 * The extended post API (ibv_qp_ex, ibv_wr_*) beyond WRITE, READ, SEND and atomics, on RC QPs of one device
 * (loopback) created with ibv_create_qp_ex, with what a real stack answers, checked. Prints one line per case ("ok
 * CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got the expected answer.
 *
 *   wr-bind-mw      ibv_wr_bind_mw of a type 2 window; a WRITE through its rkey   IBV_WC_SUCCESS twice, bytes placed
 *   wr-local-inv    ibv_wr_local_inv of the window; a WRITE with its rkey          IBV_WC_SUCCESS; IBV_WC_REM_ACCESS_ERR
 *   wr-send-inv     ibv_wr_send_inv naming a bound window of the responder         IBV_WC_SUCCESS; the window's rkey dead
 *   wr-tso          ibv_wr_send_tso on an RC QP                                    ibv_wr_complete: EOPNOTSUPP
 *   wr-atomic-write ibv_wr_atomic_write                                             ibv_wr_complete: EOPNOTSUPP
 *   wr-ud-addr      ibv_wr_set_ud_addr after ibv_wr_send on an RC QP (ignored)      no crash; the SEND completes
 *
 * Build: gcc -g wr_api.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static struct ibv_qp *new_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 1},
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_LOCAL_INV |
				  IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_BIND_MW};
	return ibv_create_qp_ex(ctx, &ia);
}

static int await(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n;
	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		;
	return n < 0 ? -1000 : (int)wc->status;
}

static int status(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	return await(cq, &wc);
}

/* One RDMA WRITE of 16 bytes from a, through ibv_wr_*, and its completion status (or -errno of the post). */
static int write_status(struct ibv_qp *a, struct ibv_cq *cq, char *src, struct ibv_mr *ms, uint64_t raddr,
			uint32_t rkey)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a);
	ibv_wr_start(x);
	x->wr_id = 7;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, rkey, raddr);
	ibv_wr_set_sge(x, ms->lkey, (uintptr_t)src, 16);
	int e = ibv_wr_complete(x);
	return e ? -e : status(cq);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	size_t len = 4096;
	char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len), *rbuf = aligned_alloc(4096, len);
	memset(src, 'x', len);
	memset(dst, 0, len);
	struct ibv_mr *ms = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *md = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							     IBV_ACCESS_MW_BIND);
	struct ibv_mr *mr = ibv_reg_mr(pd, rbuf, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *a = cq ? new_qp(cq) : NULL, *b = cq ? new_qp(cq) : NULL;
	if (!ms || !md || !mr || !a || !b || connect_qp(a, b->qp_num) || connect_qp(b, a->qp_num)) {
		perror("setting up the QPs");
		return 2;
	}
	struct ibv_qp_ex *xb = ibv_qp_to_qp_ex(b), *xa = ibv_qp_to_qp_ex(a);

	/* a type 2 window over dst, bound by ibv_wr_bind_mw on the responder's QP */
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw) {
		perror("ibv_alloc_mw type 2");
		return 2;
	}
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_mw_bind_info info = {.mr = md, .addr = (uintptr_t)dst, .length = 2048,
					.mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
	ibv_wr_start(xb);
	xb->wr_id = 21;
	xb->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(xb, mw, rkey, &info);
	int r = ibv_wr_complete(xb);
	check("wr-bind-mw", r == 0, "ibv_wr_complete posted the bind");
	expect_status("wr-bind-mw", r ? -r : status(cq), IBV_WC_SUCCESS);
	expect_status("wr-bind-mw", write_status(a, cq, src, ms, (uintptr_t)dst + 1000, rkey), IBV_WC_SUCCESS);
	check("wr-bind-mw", dst[1000] == 'x', "the bytes arrived through the window");

	/* ibv_wr_local_inv of that window; a WRITE with its rkey then fails and moves a to ERR */
	ibv_wr_start(xb);
	xb->wr_id = 22;
	xb->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(xb, rkey);
	r = ibv_wr_complete(xb);
	expect_status("wr-local-inv", r ? -r : status(cq), IBV_WC_SUCCESS);
	memset(dst, 0, len);
	expect_status("wr-local-inv", write_status(a, cq, src, ms, (uintptr_t)dst + 1000, rkey),
		      IBV_WC_REM_ACCESS_ERR);
	check("wr-local-inv", dst[1000] == 0, "the target bytes are unchanged");

	/* fresh QPs; a SEND_WITH_INV from a invalidates a window bound again at b */
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	a = new_qp(cq);
	b = new_qp(cq);
	if (!a || !b || connect_qp(a, b->qp_num) || connect_qp(b, a->qp_num)) {
		perror("setting up the second QPs");
		return 2;
	}
	xa = ibv_qp_to_qp_ex(a);
	xb = ibv_qp_to_qp_ex(b);
	rkey = ibv_inc_rkey(rkey);
	ibv_wr_start(xb);
	xb->wr_id = 31;
	xb->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(xb, mw, rkey, &info);
	r = ibv_wr_complete(xb);
	expect_status("wr-send-inv", r ? -r : status(cq), IBV_WC_SUCCESS);
	struct ibv_sge rs = {.addr = (uintptr_t)rbuf, .length = 64, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 32, .sg_list = &rs, .num_sge = 1}, *bad_rw;
	r = ibv_post_recv(b, &rw, &bad_rw);
	ibv_wr_start(xa);
	xa->wr_id = 33;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(xa, rkey);
	ibv_wr_set_sge(xa, ms->lkey, (uintptr_t)src, 8);
	r = r ? r : ibv_wr_complete(xa);
	struct ibv_wc w1 = {0}, w2 = {0};
	int s1 = r ? -r : await(cq, &w1), s2 = r ? -r : await(cq, &w2);
	struct ibv_wc *recv = w1.wr_id == 32 ? &w1 : &w2;
	expect_status("wr-send-inv", s1 == IBV_WC_SUCCESS ? s2 : s1, IBV_WC_SUCCESS);
	check("wr-send-inv", recv->wr_id == 32 && (recv->wc_flags & IBV_WC_WITH_INV) && recv->invalidated_rkey == rkey,
	      "the receive completion carries IBV_WC_WITH_INV and the window's rkey");
	expect_status("wr-send-inv", write_status(a, cq, src, ms, (uintptr_t)dst + 1000, rkey), IBV_WC_REM_ACCESS_ERR);

	/* operations the device does not execute: nothing is posted, ibv_wr_complete answers */
	ibv_wr_start(xb);
	ibv_wr_send_tso(xb, src, 16, 1024);
	r = ibv_wr_complete(xb);
	check("wr-tso", r == EOPNOTSUPP, "ibv_wr_send_tso: ibv_wr_complete answered EOPNOTSUPP");
	uint64_t value = 1;
	ibv_wr_start(xb);
	ibv_wr_atomic_write(xb, md->rkey, (uintptr_t)dst, &value);
	r = ibv_wr_complete(xb);
	check("wr-atomic-write", r == EOPNOTSUPP, "ibv_wr_atomic_write: ibv_wr_complete answered EOPNOTSUPP");

	/* an address for a UD destination on an RC request: the provider ignores it; nothing crashes */
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	a = new_qp(cq);
	b = new_qp(cq);
	if (!a || !b || connect_qp(a, b->qp_num) || connect_qp(b, a->qp_num)) {
		perror("setting up the third QPs");
		return 2;
	}
	xa = ibv_qp_to_qp_ex(a);
	r = ibv_post_recv(b, &rw, &bad_rw);
	ibv_wr_start(xa);
	xa->wr_id = 41;
	xa->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(xa);
	ibv_wr_set_ud_addr(xa, NULL, 0, 0);
	ibv_wr_set_sge(xa, ms->lkey, (uintptr_t)src, 8);
	r = r ? r : ibv_wr_complete(xa);
	s1 = r ? -r : status(cq);
	s2 = r ? -r : status(cq);
	expect_status("wr-ud-addr", s1 == IBV_WC_SUCCESS ? s2 : s1, IBV_WC_SUCCESS);

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(md);
	ibv_dereg_mr(ms);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
