/*
 * A RoCE port's addresses and MTU through the verbs, with what a real stack answers, checked. Prints one line per case
 * ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got the expected answer. Run on a RoCE device
 * whose netdev has an IPv4 address (rnicsim exec --ipv4) and the default 1500-byte MTU (active_mtu 1024).
 *
 *   gid-types     ibv_query_gid_ex of every valid entry: its type; the IPv4-mapped entry is RoCE v2 on a v2 port
 *   gid-bad       an index past gid_tbl_len; an empty entry; flags != 0               EINVAL; ENODATA; EINVAL
 *   ah-nogrh      ibv_create_ah without a GRH on RoCE (rdma_check_ah_attr, mlx5_create_ah)             EINVAL
 *   ah-sgid       ibv_create_ah with sgid_index of an empty entry (rdma_get_gid_attr); past gid_tbl_len, where a
 *                 u8 reaches it                                                              ENODATA; EINVAL
 *   rtr-nogrh     an RC QP to RTR with an address vector without a GRH (_ib_modify_qp's rdma_check_ah_attr)
 *                 EINVAL, the QP still in INIT
 *   pmtu          an RC QP to RTR with path_mtu 4096 above active_mtu 1024: with the argument pmtu-refused EINVAL (hns's
 *                 check_mtu_validate), else 0 (mlx5, rxe take it)
 *   grh-ipv4      a UD datagram sent from the IPv4-mapped GID: bytes 0..19 of the receive are zero, 20..39 an IPv4
 *                 header (version 4, IHL 5, protocol UDP, the addresses); ibv_init_ah_from_wc answers the
 *                 IPv4-mapped GID and its index
 *
 * Build: gcc -g roce_port.c -libverbs; run: ./a.out [pmtu-refused]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

#define QKEY 0x11111111

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int valid; /* the valid entries of port 1's GID table */

static int mapped(const uint8_t *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return !memcmp(g, prefix, 12);
}

/* The index of the port's IPv4-mapped RoCE v2 GID, or -1. */
static int gid_cases(struct ibv_port_attr *port)
{
	int v4 = -1;
	for (uint32_t i = 0; i < port->gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			break;
		valid++;
		if (mapped(e.gid.raw) && e.gid_type == IBV_GID_TYPE_ROCE_V2 && v4 < 0)
			v4 = (int)i;
	}
	check("gid-types", v4 >= 0, "an IPv4-mapped RoCE v2 entry follows the link-local ones");
	struct ibv_gid_entry e;
	check("gid-bad", ibv_query_gid_ex(ctx, 1, port->gid_tbl_len, &e, 0) == EINVAL, "an index past gid_tbl_len: EINVAL");
	check("gid-bad", ibv_query_gid_ex(ctx, 1, valid, &e, 0) == ENODATA, "an empty entry: ENODATA");
	check("gid-bad", ibv_query_gid_ex(ctx, 1, 0, &e, 1) == EINVAL, "flags 1: EINVAL");
	return v4;
}

static void ah_cases(struct ibv_port_attr *port, const union ibv_gid *gid0)
{
	struct ibv_ah_attr a = {.dlid = 1, .port_num = 1};
	errno = 0;
	struct ibv_ah *ah = ibv_create_ah(pd, &a);
	check("ah-nogrh", !ah && errno == EINVAL, "no GRH on a RoCE port: EINVAL");
	a.is_global = 1;
	a.grh.dgid = *gid0;
	a.grh.hop_limit = 1;
	a.grh.sgid_index = valid;
	errno = 0;
	ah = ibv_create_ah(pd, &a);
	check("ah-sgid", !ah && errno == ENODATA, "sgid_index of an empty entry: ENODATA");
	if (port->gid_tbl_len <= 255) { /* sgid_index is a u8 */
		a.grh.sgid_index = port->gid_tbl_len;
		errno = 0;
		ah = ibv_create_ah(pd, &a);
		check("ah-sgid", !ah && errno == EINVAL, "sgid_index past gid_tbl_len: EINVAL");
	}
}

static struct ibv_qp *rc_in_init(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	if (!qp || loopback_init(qp, IBV_ACCESS_REMOTE_WRITE)) {
		perror("an RC QP in INIT");
		exit(2);
	}
	return qp;
}

static void rtr_cases(const union ibv_gid *gid0, int pmtu_refused)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *qp = rc_in_init(cq);
	int r = loopback_rtr(qp, qp->qp_num, 1, NULL, IBV_MTU_1024, 1);
	struct ibv_qp_attr got;
	struct ibv_qp_init_attr gi;
	ibv_query_qp(qp, &got, IBV_QP_STATE, &gi);
	check("rtr-nogrh", r == EINVAL && got.qp_state == IBV_QPS_INIT, "no GRH on a RoCE port: EINVAL, still INIT");
	r = loopback_rtr(qp, qp->qp_num, 0, gid0, IBV_MTU_4096, 1);
	if (pmtu_refused)
		check("pmtu", r == EINVAL, "path_mtu 4096 above active_mtu 1024: EINVAL");
	else
		check("pmtu", r == 0, "path_mtu 4096 above active_mtu 1024: taken");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static struct ibv_qp *ud_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	if (!qp && errno == EOPNOTSUPP)
		return NULL; /* a driver without UD QPs (hns HIP08) */
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = QKEY};
	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) {
		perror("a UD QP");
		exit(2);
	}
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) {
		perror("UD to RTR");
		exit(2);
	}
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		perror("UD to RTS");
		exit(2);
	}
	return qp;
}

static int await_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (long spins = 0; spins < 200000000L; spins++) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return wc->status;
	}
	return -1;
}

static void grh_ipv4_case(int v4)
{
	union ibv_gid gid;
	ibv_query_gid(ctx, 1, v4, &gid);
	size_t len = 4096;
	char *buf = aligned_alloc(4096, len);
	memset(buf, 0x5a, len);
	memcpy(buf, "IPV4", 4);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *acq = ibv_create_cq(ctx, 8, NULL, NULL, 0), *bcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *a = ud_qp(acq), *b = a ? ud_qp(bcq) : NULL;
	if (!a || !b) {
		printf("skip grh-ipv4: the driver has no UD QPs\n");
		return;
	}
	struct ibv_ah_attr aa = {.port_num = 1, .is_global = 1};
	aa.grh.dgid = gid;
	aa.grh.sgid_index = v4;
	aa.grh.hop_limit = 64;
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge rs = {.addr = (uintptr_t)buf + 1024, .length = 128, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)buf, .length = 4, .lkey = mr->lkey};
	struct ibv_send_wr sw = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *sbad;
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = b->qp_num;
	sw.wr.ud.remote_qkey = QKEY;
	if (!mr || !ah || ibv_post_recv(b, &rw, &rbad) || ibv_post_send(a, &sw, &sbad)) {
		perror("grh-ipv4 setup");
		exit(2);
	}
	struct ibv_wc wc;
	await_wc(acq, &wc);
	expect_status("grh-ipv4", await_wc(bcq, &wc), IBV_WC_SUCCESS);
	const uint8_t *h = (const uint8_t *)buf + 1024;
	int zero = 1;
	for (int i = 0; i < 20; i++)
		zero &= h[i] == 0;
	check("grh-ipv4", (wc.wc_flags & IBV_WC_GRH) && wc.byte_len == 44, "IBV_WC_GRH, byte_len 40 + 4");
	check("grh-ipv4", zero, "bytes 0..19 are zero");
	check("grh-ipv4", h[20] == 0x45 && h[29] == 17, "bytes 20..39 hold an IPv4 header: version 4, IHL 5, UDP");
	check("grh-ipv4", !memcmp(h + 32, gid.raw + 12, 4) && !memcmp(h + 36, gid.raw + 12, 4),
	      "its source and destination are the netdev's address");
	check("grh-ipv4", !memcmp(h + 40, "IPV4", 4), "the payload follows at byte 40");
	struct ibv_ah_attr back;
	int r = ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)h, &back);
	check("grh-ipv4", r == 0 && back.is_global && back.grh.sgid_index == v4 && !memcmp(back.grh.dgid.raw, gid.raw, 16),
	      "ibv_init_ah_from_wc: the IPv4-mapped GID and its index");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(acq);
	ibv_destroy_cq(bcq);
	ibv_dereg_mr(mr);
}

int main(int argc, char **argv)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	struct ibv_port_attr port;
	union ibv_gid gid0;
	if (ibv_query_port(ctx, 1, &port) || ibv_query_gid(ctx, 1, 0, &gid0)) {
		perror("opening the device");
		return 2;
	}
	if (port.link_layer != IBV_LINK_LAYER_ETHERNET) {
		fprintf(stderr, "not a RoCE port\n");
		return 2;
	}
	int v4 = gid_cases(&port);
	ah_cases(&port, &gid0);
	rtr_cases(&gid0, argc > 1 && !strcmp(argv[1], "pmtu-refused"));
	if (v4 >= 0)
		grh_ipv4_case(v4);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
