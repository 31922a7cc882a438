/*
 * Bad input to the control and post verbs, as a careless program gives it, on a device of the mlx5 provider: each
 * call gets the errno a real stack gives and leaves the objects as they were, so that a correct call after it works.
 * Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case held.
 *
 *   modify-mask       RESET -> INIT with IBV_QP_STATE alone (PKEY_INDEX, PORT, ACCESS_FLAGS missing)   EINVAL
 *   modify-port       INIT with port_num 0, and with a port the device lacks                          EINVAL
 *   modify-pkey       a P_Key index past the port's table                                              EINVAL
 *   modify-state      qp_state 42                                                                      EINVAL
 *   modify-bits       an attr_mask bit past IBV_QP_DEST_QPN                                            EOPNOTSUPP
 *   modify-skip       RESET -> RTS in one step                                                         EINVAL
 *   modify-rts-rts    RTS -> RTS with IBV_QP_SQ_PSN, which that transition does not take               EINVAL
 *                     RTS -> RTS with IBV_QP_MIN_RNR_TIMER, which it takes                             0
 *   ah-port           ibv_create_ah with port_num 0                                                    NULL
 *   recv-srq-qp       ibv_post_recv on a QP whose receives come from an SRQ                            ENOMEM, bad_wr
 *   send-sge          ibv_post_send with more SGEs than max_send_sge                                   ENOMEM, bad_wr
 *   reg-access        ibv_reg_mr with a bit of the optional range no device implements (1 << 21)        an MR
 *                     ibv_reg_mr with a bit that is no access flag (1 << 10)                           EINVAL
 *   write             after all of them, an RDMA WRITE on the same QP                                  the bytes arrive
 *
 * Build: gcc -g bad_input.c -libverbs.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static enum ibv_qp_state state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ? IBV_QPS_UNKNOWN : a.qp_state;
}

/* One ibv_modify_qp that must fail with want and leave the QP in the state it was in. */
static void refused(const char *name, struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, int want)
{
	enum ibv_qp_state before = state_of(qp);
	int e = ibv_modify_qp(qp, a, mask);
	char what[160];
	snprintf(what, sizeof(what), "%s (%d), expected %s; the QP stays in state %d (now %d)", e ? strerror(e) : "0",
		 e, strerror(want), before, state_of(qp));
	check(name, e == want && state_of(qp) == before, what);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	size_t len = 8192;
	char *buf = aligned_alloc(4096, len);
	memset(buf, 'x', 4096);
	memset(buf + 4096, 0, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia), *b = ibv_create_qp(pd, &ia);
	if (!mr || !cq || !a || !b) {
		perror("setting up");
		return 2;
	}

	struct ibv_qp_attr at = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE};
	int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	refused("modify-mask", a, &at, IBV_QP_STATE, EINVAL);
	at.port_num = 0;
	refused("modify-port", a, &at, init_mask, EINVAL);
	at.port_num = 9;
	refused("modify-port", a, &at, init_mask, EINVAL);
	at.port_num = 1;
	at.pkey_index = 500;
	refused("modify-pkey", a, &at, init_mask, EINVAL);
	at.pkey_index = 0;
	at.qp_state = 42;
	refused("modify-state", a, &at, init_mask, EINVAL);
	at.qp_state = IBV_QPS_INIT;
	refused("modify-bits", a, &at, init_mask | (1 << 22), EOPNOTSUPP);
	at.qp_state = IBV_QPS_RTS;
	refused("modify-skip", a, &at, IBV_QP_STATE | IBV_QP_SQ_PSN, EINVAL);

	if (connect_qp(a, b->qp_num) || connect_qp(b, a->qp_num)) {
		perror("connecting after the refused calls");
		return 2;
	}
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	refused("modify-rts-rts", a, &at, IBV_QP_STATE | IBV_QP_SQ_PSN, EINVAL);
	at.min_rnr_timer = 14;
	int e = ibv_modify_qp(a, &at, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER);
	check("modify-rts-rts", e == 0 && state_of(a) == IBV_QPS_RTS, e ? strerror(e) : "RTS -> RTS with a new RNR timer");

	struct ibv_ah_attr aa = {.dlid = lid, .port_num = 0};
	errno = 0;
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	check("ah-port", ah == NULL, ah ? "an address handle through port 0" : "NULL");

	struct ibv_srq_init_attr sia = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	struct ibv_qp_init_attr sa = ia;
	sa.srq = srq;
	struct ibv_qp *s = srq ? ibv_create_qp(pd, &sa) : NULL;
	struct ibv_qp_attr si = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	if (!s || ibv_modify_qp(s, &si, init_mask)) {
		perror("a QP with an SRQ");
		return 2;
	}
	struct ibv_sge rs = {.addr = (uintptr_t)buf + 4096, .length = 64, .lkey = mr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 5, .sg_list = &rs, .num_sge = 1}, *rbad = NULL;
	e = ibv_post_recv(s, &rw, &rbad);
	check("recv-srq-qp", e == ENOMEM && rbad == &rw, e ? strerror(e) : "posted a receive to a QP with an SRQ");

	struct ibv_sge sg[3];
	for (int i = 0; i < 3; i++)
		sg[i] = (struct ibv_sge){.addr = (uintptr_t)buf + i * 16, .length = 16, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 7, .sg_list = sg, .num_sge = 3, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	e = ibv_post_send(a, &wr, &bad);
	check("send-sge", e == ENOMEM && bad == &wr, e ? strerror(e) : "posted more SGEs than max_send_sge");

	struct ibv_mr *opt = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | (1 << 21));
	check("reg-access", opt != NULL, opt ? "an optional access bit is taken, as the kernel takes it" : strerror(errno));
	if (opt)
		ibv_dereg_mr(opt);
	errno = 0;
	struct ibv_mr *junk = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | (1 << 10));
	check("reg-access", junk == NULL && errno == EINVAL, junk ? "registered with a bit that is no access flag"
								   : strerror(errno));

	wr.num_sge = 2;
	e = ibv_post_send(a, &wr, &bad);
	struct ibv_wc wc;
	int n = 0;
	while (!e && (n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	expect_status("write", e || n < 0 ? -1 : (int)wc.status, IBV_WC_SUCCESS);
	check("write", memcmp(buf + 4096, buf, 32) == 0 && buf[4096 + 32] == 0, "the 32 bytes arrived, and no more");

	ibv_destroy_qp(s);
	ibv_destroy_srq(srq);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%s\n", failures ? "FAILED" : "all cases as a real stack answers");
	return failures ? 1 : 0;
}
