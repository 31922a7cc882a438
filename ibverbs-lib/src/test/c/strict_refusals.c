/*
 * Refusals of ibv_post_srq_recv and ibv_wr_complete, for strict mode's report of each (the reason and the call
 * site, once per refusal). Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every
 * case held.
 *
 *   srq-sge           ibv_post_srq_recv with more SGEs than the SRQ's max_sge                        EINVAL, bad_wr
 *   srq-full          ibv_post_srq_recv of more receives than the SRQ's max_wr                       ENOMEM, bad_wr
 *   wr-sge-list       ibv_wr_set_sge_list with 17 SGEs, then ibv_wr_complete                          EINVAL
 *   wr-reset          ibv_wr_rdma_write on a QP still in RESET, then ibv_wr_complete                  EINVAL
 *
 * Build: gcc -g -rdynamic strict_refusals.c -libverbs.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr sia = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	if (!mr || !cq || !srq) {
		printf("FAIL setup: %s\n", strerror(errno));
		return 1;
	}

	struct ibv_sge sges[2] = {{.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey},
				  {.addr = (uintptr_t)buf + 64, .length = 64, .lkey = mr->lkey}};
	struct ibv_recv_wr two = {.wr_id = 5, .sg_list = sges, .num_sge = 2}, *bad = NULL;
	int e = ibv_post_srq_recv(srq, &two, &bad);
	check("srq-sge", e == EINVAL && bad == &two, e ? strerror(e) : "posted 2 SGEs to an SRQ of max_sge 1");

	struct ibv_recv_wr many[64];
	unsigned n = sia.attr.max_wr + 1;
	for (unsigned i = 0; i < n; i++)
		many[i] = (struct ibv_recv_wr){.wr_id = 100 + i, .sg_list = sges, .num_sge = 1,
					       .next = i + 1 < n ? &many[i + 1] : NULL};
	bad = NULL;
	e = ibv_post_srq_recv(srq, &many[0], &bad);
	check("srq-full", e == ENOMEM && bad && bad != &many[0], e ? strerror(e) : "posted past the SRQ's max_wr");

	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 1},
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &ia);
	struct ibv_qp_ex *x = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	if (!x) {
		printf("FAIL setup: ibv_create_qp_ex: %s\n", strerror(errno));
		return 1;
	}
	struct ibv_sge seventeen[17];
	for (int i = 0; i < 17; i++)
		seventeen[i] = sges[0];
	ibv_wr_start(x);
	x->wr_id = 9;
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 17, seventeen);
	e = ibv_wr_complete(x);
	check("wr-sge-list", e == EINVAL, e ? strerror(e) : "completed a work request of 17 SGEs");

	ibv_wr_start(x);
	x->wr_id = 10;
	ibv_wr_rdma_write(x, 0x1234, (uintptr_t)buf);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 64);
	e = ibv_wr_complete(x);
	check("wr-reset", e == EINVAL, e ? strerror(e) : "posted on a QP in RESET");

	ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return failures ? 1 : 0;
}
