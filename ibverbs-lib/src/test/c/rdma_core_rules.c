/*
 * The rules rdma-core's own tests (tests/test_cq.py, test_cqex.py, test_device.py, test_qp.py) check of CQ
 * creation, device and QP queries, QP creation flags and send_ops_flags, and SRQ sizes. Universal answers are
 * checked here ("ok CASE" or "FAIL CASE"); answers that differ by provider are printed ("value NAME: N") for the
 * Java test to compare with the profile's.
 *
 *   cq-vector         ibv_create_cq on comp_vector num_comp_vectors                   NULL, EINVAL
 *   cq-ex-vector      ibv_create_cq_ex on comp_vector num_comp_vectors                NULL, EINVAL
 *   port-cnt-ex       ibv_query_device_ex                                             phys_port_cnt_ex = phys_port_cnt
 *   qkey              a UD QP to INIT with a Q_Key, then ibv_query_qp IBV_QP_QKEY     the Q_Key
 *   create-flags      create_flags 0, then a bit no kernel knows                      a QP; NULL with EINVAL
 *   srq-full          ibv_post_srq_recv of max_wr + 1 receives                        ENOMEM, bad_wr the last
 *   value num_comp_vectors, data_in_order_init, data_in_order_rts, block_mcast_lb (0 or the errno),
 *         send_ops_atomic_write (0 or the errno), send_ops_tso (the errno), srq_zero_wr (0 or the errno)
 */
#include <errno.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;

static struct ibv_qp *create(enum ibv_qp_type type, uint32_t comp_mask, uint32_t create_flags, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex a = {.send_cq = cq, .recv_cq = cq, .qp_type = type, .pd = pd,
					.comp_mask = IBV_QP_INIT_ATTR_PD | comp_mask, .create_flags = create_flags,
					.send_ops_flags = send_ops,
					.cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	errno = 0;
	return ibv_create_qp_ex(ctx, &a);
}

static void value_of_create(const char *name, struct ibv_qp *qp)
{
	printf("value %s: %d\n", name, qp ? 0 : errno);
	if (qp)
		ibv_destroy_qp(qp);
}

static int modify(struct ibv_qp *qp, enum ibv_qp_state state, int mask, uint32_t qkey)
{
	struct ibv_qp_attr a = {.qp_state = state, .port_num = 1, .qkey = qkey, .sq_psn = 0};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | mask);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	printf("value num_comp_vectors: %d\n", ctx->num_comp_vectors);

	errno = 0;
	struct ibv_cq *bad = ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors);
	check("cq-vector", !bad && errno == EINVAL, "comp_vector = num_comp_vectors: NULL with EINVAL");
	struct ibv_cq *last = ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors - 1);
	check("cq-vector", last != NULL, "the last vector takes a CQ");
	if (last)
		ibv_destroy_cq(last);
	struct ibv_cq_init_attr_ex cx = {.cqe = 16, .comp_vector = (uint32_t)ctx->num_comp_vectors,
					 .wc_flags = IBV_WC_STANDARD_FLAGS};
	errno = 0;
	struct ibv_cq_ex *bad_ex = ibv_create_cq_ex(ctx, &cx);
	check("cq-ex-vector", !bad_ex && errno == EINVAL, "comp_vector = num_comp_vectors: NULL with EINVAL");

	struct ibv_device_attr_ex dx;
	check("port-cnt-ex", ibv_query_device_ex(ctx, NULL, &dx) == 0 && dx.phys_port_cnt_ex == dx.orig_attr.phys_port_cnt
				     && dx.phys_port_cnt_ex >= 1, "phys_port_cnt_ex equals phys_port_cnt");

	struct ibv_qp *ud = create(IBV_QPT_UD, 0, 0, 0);
	struct ibv_qp_attr got;
	struct ibv_qp_init_attr init;
	check("qkey", ud && modify(ud, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0x123) == 0 &&
			      ibv_query_qp(ud, &got, IBV_QP_QKEY, &init) == 0 && got.qkey == 0x123,
	      "ibv_query_qp reads back Q_Key 0x123");
	printf("value data_in_order_init: %d\n", ibv_query_qp_data_in_order(ud, IBV_WR_SEND, 0));
	modify(ud, IBV_QPS_RTR, 0, 0);
	modify(ud, IBV_QPS_RTS, IBV_QP_SQ_PSN, 0);
	printf("value data_in_order_rts: %d\n", ibv_query_qp_data_in_order(ud, IBV_WR_SEND, 0));
	ibv_destroy_qp(ud);

	struct ibv_qp *plain = create(IBV_QPT_RC, IBV_QP_INIT_ATTR_CREATE_FLAGS, 0, 0);
	check("create-flags", plain != NULL, "create_flags 0: a QP");
	if (plain)
		ibv_destroy_qp(plain);
	struct ibv_qp *unknown = create(IBV_QPT_RC, IBV_QP_INIT_ATTR_CREATE_FLAGS, 1u << 20, 0);
	check("create-flags", !unknown && errno == EINVAL, "a bit no kernel knows: NULL with EINVAL");
	value_of_create("block_mcast_lb", create(IBV_QPT_UD, IBV_QP_INIT_ATTR_CREATE_FLAGS,
						 IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, 0));
	value_of_create("send_ops_atomic_write", create(IBV_QPT_RC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0,
							IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE));
	value_of_create("send_ops_tso", create(IBV_QPT_UD, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0, IBV_QP_EX_WITH_TSO));
	value_of_create("send_ops_send", create(IBV_QPT_RC, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, 0,
						IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE));

	struct ibv_srq_init_attr zero = {.attr = {.max_wr = 0, .max_sge = 0}};
	errno = 0;
	struct ibv_srq *zsrq = ibv_create_srq(pd, &zero);
	printf("value srq_zero_wr: %d\n", zsrq ? 0 : errno);
	if (zsrq)
		ibv_destroy_srq(zsrq);

	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	if (srq) {
		static char buf[4096];
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		unsigned n = sa.attr.max_wr + 1;
		struct ibv_recv_wr wrs[64];
		struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr ? mr->lkey : 0};
		for (unsigned i = 0; i < n && i < 64; i++)
			wrs[i] = (struct ibv_recv_wr){.wr_id = i, .sg_list = &sge, .num_sge = 1,
						      .next = i + 1 < n ? &wrs[i + 1] : NULL};
		struct ibv_recv_wr *bad_wr = NULL;
		int e = ibv_post_srq_recv(srq, wrs, &bad_wr);
		check("srq-full", n <= 64 && e == ENOMEM && bad_wr == &wrs[n - 1],
		      "max_wr + 1 receives: ENOMEM, bad_wr the one past max_wr");
		ibv_destroy_srq(srq);
		if (mr)
			ibv_dereg_mr(mr);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
