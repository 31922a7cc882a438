/*
 * Values wider than the fields they end in, as a C program can give them: ibv_modify_qp with PSNs above 24 bits,
 * retry counts above 7, an RNR timer and an ACK timeout above 31, and ibv_post_send / ibv_post_recv with a negative
 * num_sge. Prints what the stack answered, one line per case ("CASE: ..."), for the test to compare with the driver's
 * rule (sim-nic QpAttrValues, ProviderRule.NUM_SGE_COMPARED_SIGNED); exits 0 when the setup worked.
 *
 *   rtr, rts          INIT -> RTR with rq_psn 0x7f000005, min_rnr_timer 40 and max_dest_rd_atomic 3,
 *                     RTR -> RTS with sq_psn 0xff000042, retry_cnt 9, rnr_retry 15: the errno, then
 *                     ibv_query_qp's values
 *   timeout           another QP's RTR -> RTS with timeout 46: the errno, the state, the timeout ibv_query_qp answers
 *   depth 200         another QP's INIT -> RTR with max_dest_rd_atomic 200: the errno, the depth answered
 *   dest-qpn, depth 0 another QP's INIT -> RTR with dest_qp_num 0x5a000000 | b's number and max_dest_rd_atomic 0:
 *                     the errno, the bits above 24 of the dest_qp_num answered, and the depth answered
 *   send-negative     an RDMA WRITE with num_sge -1: the errno, or the completion's status
 *   recv-negative     a receive with num_sge -1: the errno
 *
 * Build: gcc -g field_widths.c -libverbs.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static union ibv_gid gid;
static int roce;

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = qp_access};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void address(struct ibv_qp_attr *a)
{
	a->ah_attr.port_num = 1;
	if (roce) {
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = gid;
		a->ah_attr.grh.hop_limit = 1;
	} else {
		a->ah_attr.dlid = lid;
	}
}

static const char *said(int e)
{
	return e ? strerror(e) : "0";
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device **list = open_first_device(&ctx, &pd);
	struct ibv_port_attr port;
	roce = ibv_query_port(ctx, 1, &port) == 0 && port.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (roce && ibv_query_gid(ctx, 1, 0, &gid)) {
		perror("ibv_query_gid");
		return 2;
	}
	char *buf = aligned_alloc(4096, 8192);
	memset(buf, 'w', 8192);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia), *b = ibv_create_qp(pd, &ia);
	if (!mr || !cq || !a || !b || to_init(a) || to_init(b)) {
		perror("setting up");
		return 2;
	}
	int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	int rts_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	struct ibv_qp_attr at = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = b->qp_num,
				 .rq_psn = 0x7f000005, .max_dest_rd_atomic = 3, .min_rnr_timer = 40};
	address(&at);
	printf("rtr: %s\n", said(ibv_modify_qp(a, &at, rtr_mask)));
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 9;
	at.rnr_retry = 15;
	at.sq_psn = 0xff000042;
	at.max_rd_atomic = 1;
	printf("rts: %s\n", said(ibv_modify_qp(a, &at, rts_mask)));
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(a, &q, IBV_QP_STATE, &qi))
		return 2;
	printf("query: rq_psn=0x%x sq_psn=0x%x retry_cnt=%d rnr_retry=%d min_rnr_timer=%d max_dest_rd_atomic=%d\n",
	       q.rq_psn, q.sq_psn, q.retry_cnt, q.rnr_retry, q.min_rnr_timer, q.max_dest_rd_atomic);
	/* the ACK timeout goes in at RTR -> RTS (RTS -> RTS does not take it): a third QP */
	struct ibv_qp *c = ibv_create_qp(pd, &ia);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = b->qp_num;
	at.max_dest_rd_atomic = 1;
	address(&at);
	if (!c || to_init(c) || ibv_modify_qp(c, &at, rtr_mask))
		return 2;
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.timeout = 46;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 1;
	int e = ibv_modify_qp(c, &at, rts_mask);
	ibv_query_qp(c, &q, IBV_QP_STATE, &qi);
	printf("timeout: %s, state %s, timeout=%d\n", said(e), q.qp_state == IBV_QPS_RTS ? "RTS" : "not RTS", q.timeout);
	ibv_destroy_qp(c);

	/* a responder depth of 200: mlx5 refuses it (above max_qp_rd_atom), rxe keeps roundup_pow_of_two's 256 in a u8 */
	struct ibv_qp *d = ibv_create_qp(pd, &ia);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = b->qp_num;
	at.max_dest_rd_atomic = 200;
	address(&at);
	if (!d || to_init(d))
		return 2;
	e = ibv_modify_qp(d, &at, rtr_mask);
	ibv_query_qp(d, &q, IBV_QP_STATE, &qi);
	printf("depth 200: %s, max_dest_rd_atomic=%d\n", said(e), q.max_dest_rd_atomic);
	ibv_destroy_qp(d);

	/* dest_qp_num above 24 bits (rxe keeps it whole, mlx5 its 24 bits) and a responder depth of 0 (mlx5: log 0) */
	struct ibv_qp *f = ibv_create_qp(pd, &ia);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = 0x5a000000u | b->qp_num;
	at.max_dest_rd_atomic = 0;
	address(&at);
	if (!f || to_init(f))
		return 2;
	e = ibv_modify_qp(f, &at, rtr_mask);
	ibv_query_qp(f, &q, IBV_QP_STATE, &qi);
	printf("dest-qpn: %s, high bits=0x%x, low bits %s\n", said(e), q.dest_qp_num >> 24,
	       (q.dest_qp_num & 0xffffff) == b->qp_num ? "b's" : "other");
	printf("depth 0: max_dest_rd_atomic=%d\n", q.max_dest_rd_atomic);
	ibv_destroy_qp(f);

	/* b to RTS towards a, so that a's WRITE has a responder */
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = a->qp_num;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 12;
	address(&at);
	memset(&q, 0, sizeof(q));
	q.qp_state = IBV_QPS_RTS;
	q.timeout = 14;
	q.retry_cnt = 7;
	q.rnr_retry = 7;
	q.max_rd_atomic = 1;
	if (ibv_modify_qp(b, &at, rtr_mask) || ibv_modify_qp(b, &q, rts_mask)) {
		perror("connecting b");
		return 2;
	}

	struct ibv_sge sg = {.addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sg, .num_sge = -1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	memset(buf + 4096, 0, 16);
	e = ibv_post_send(a, &wr, &bad);
	if (e) {
		printf("send-negative: %s\n", strerror(e));
	} else {
		struct ibv_wc wc;
		int n;
		while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
			;
		printf("send-negative: posted, %s, %s\n", n < 0 ? "poll failed" : ibv_wc_status_str(wc.status),
		       buf[4096] == 0 ? "nothing written" : "bytes written");
	}
	struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = &sg, .num_sge = -1}, *rbad = NULL;
	e = ibv_post_recv(b, &rw, &rbad);
	printf("recv-negative: %s\n", e ? strerror(e) : "posted");

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
