/*
 * The errnos of two XRC verbs where a provider's answer differs from a first guess, checked on one device. Prints one
 * line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got the expected answer.
 *
 *   xrc-recv-queue  ibv_post_recv on an XRC_SEND QP and on an XRC_RECV QP in INIT: neither has a receive queue, and
 *                   mlx5_post_recv finds its 0 entries full before it counts SGEs             ENOMEM; ENOMEM
 *   srq-num         ibv_get_srq_num on a basic SRQ: mlx5_get_srq_num answers any SRQ's number     0, a number
 *                   mlx4_get_srq_num numbers XRC SRQs only                                        EOPNOTSUPP
 *                   on a device without IBV_DEVICE_XRC (rxe), whose provider has no get_srq_num   EOPNOTSUPP
 *
 * Build: gcc -g xrc_post.c -libverbs
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

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qp_access_flags = 0};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void recv_queue_cases(struct ibv_mr *mr)
{
	struct ibv_xrcd_init_attr xa = {.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1};
	struct ibv_xrcd *x = ibv_open_xrcd(ctx, &xa);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex ra = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x};
	struct ibv_qp *recv_qp = x ? ibv_create_qp_ex(ctx, &ra) : NULL;
	struct ibv_qp_init_attr_ex ia = {.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq, .comp_mask = IBV_QP_INIT_ATTR_PD,
					 .pd = pd, .cap = {.max_send_wr = 4, .max_send_sge = 1}};
	struct ibv_qp *send_qp = cq ? ibv_create_qp_ex(ctx, &ia) : NULL;
	if (!recv_qp || !send_qp || to_init(recv_qp) || to_init(send_qp)) {
		perror("the XRC QPs");
		exit(2);
	}
	struct ibv_sge s = {.addr = (uintptr_t)mr->addr, .length = 64, .lkey = mr->lkey};
	struct ibv_recv_wr w = {.wr_id = 1, .sg_list = &s, .num_sge = 1}, *bad = NULL;
	check("xrc-recv-queue", ibv_post_recv(send_qp, &w, &bad) == ENOMEM && bad == &w,
	      "ibv_post_recv on an XRC_SEND QP: ENOMEM, bad_wr the first");
	bad = NULL;
	check("xrc-recv-queue", ibv_post_recv(recv_qp, &w, &bad) == ENOMEM && bad == &w,
	      "ibv_post_recv on an XRC_RECV QP: ENOMEM, bad_wr the first");
	ibv_destroy_qp(send_qp);
	ibv_destroy_qp(recv_qp);
	ibv_destroy_cq(cq);
	ibv_close_xrcd(x);
}

static void srq_num_case(int xrc, int mlx5)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *a = ibv_create_srq(pd, &sa), *b = ibv_create_srq(pd, &sa);
	if (!a || !b) {
		perror("ibv_create_srq");
		exit(2);
	}
	uint32_t na = 0, nb = 0;
	int ea = ibv_get_srq_num(a, &na), eb = ibv_get_srq_num(b, &nb);
	if (mlx5)
		check("srq-num", ea == 0 && eb == 0 && na != 0 && nb != 0 && na != nb,
		      "a basic SRQ on mlx5: 0, its own number");
	else if (xrc)
		check("srq-num", ea == EOPNOTSUPP && eb == EOPNOTSUPP && na == 0,
		      "a basic SRQ on a provider that numbers XRC SRQs only: EOPNOTSUPP, srq_num untouched");
	else
		check("srq-num", ea == EOPNOTSUPP && eb == EOPNOTSUPP && na == 0,
		      "a basic SRQ on a device without IBV_DEVICE_XRC: EOPNOTSUPP, srq_num untouched");
	ibv_destroy_srq(a);
	ibv_destroy_srq(b);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	struct ibv_device_attr da;
	if (ibv_query_device(ctx, &da)) {
		perror("opening the device");
		return 2;
	}
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		perror("ibv_reg_mr");
		return 2;
	}
	int xrc = (da.device_cap_flags & IBV_DEVICE_XRC) != 0;
	if (xrc)
		recv_queue_cases(mr);
	srq_num_case(xrc, strncmp(ibv_get_device_name(list[0]), "mlx5", 4) == 0);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
