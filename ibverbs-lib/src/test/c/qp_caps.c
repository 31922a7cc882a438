/*
 * What ibv_create_qp writes back into attr->cap, what ibv_query_qp reports (IBV_QP_CAP) and what ibv_create_cq gives
 * cq->cqe, one line each, which QpCapsProgramTest compares with the provider's sizing (libmlx5's WQEs, rxe's queues,
 * siw's and hns's CQ rounding); then a QP on an SRQ asked for one receive work request more than max_qp_wr: created
 * on rxe (rxe_qp_chk_cap skips a QP with an SRQ), EINVAL on mlx5 (mlx5_calc_rq_size); where created, what it
 * got back and what ibv_query_qp answers for it (0 receive caps: rxe_qp_to_init leaves them out).
 */
#include "checks.h"
#include <errno.h>

static void show(const char *what, const struct ibv_qp_cap *c)
{
	printf("%s: send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u\n", what, c->max_send_wr, c->max_recv_wr,
	       c->max_send_sge, c->max_recv_sge, c->max_inline_data);
	fflush(stdout);
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	open_first_device(&ctx, &pd);
	struct ibv_device_attr dev;
	if (ibv_query_device(ctx, &dev)) {
		perror("ibv_query_device");
		return 2;
	}
	struct ibv_cq *cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	if (!cq) {
		perror("ibv_create_cq");
		return 2;
	}
	printf("cq: cqe %d\n", cq->cqe);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 64, .max_recv_wr = 10, .max_send_sge = 1, .max_recv_sge = 1,
					      .max_inline_data = 64}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	if (!qp) {
		perror("ibv_create_qp");
		return 2;
	}
	show("created", &ia.cap);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr q;
	memset(&q, 0, sizeof(q));
	if (ibv_query_qp(qp, &a, IBV_QP_CAP, &q)) {
		perror("ibv_query_qp");
		return 2;
	}
	show("queried", &q.cap);
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	errno = 0;
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	if (!srq) { /* a device without shared receive queues (max_srq 0: E810) */
		printf("srq qp: no srq errno %d\n", errno);
		ibv_destroy_qp(qp);
		ibv_destroy_cq(cq);
		return 0;
	}
	struct ibv_qp_init_attr on = {.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = (uint32_t)dev.max_qp_wr + 1,
					      .max_send_sge = 1, .max_recv_sge = 1}};
	errno = 0;
	struct ibv_qp *srq_qp = ibv_create_qp(pd, &on);
	printf("srq qp: %s errno %d\n", srq_qp ? "created" : "refused", srq_qp ? 0 : errno);
	if (srq_qp) {
		show("srq qp", &on.cap);
		struct ibv_qp_init_attr sq;
		memset(&sq, 0, sizeof(sq));
		if (ibv_query_qp(srq_qp, &a, IBV_QP_CAP, &sq)) {
			perror("ibv_query_qp");
			return 2;
		}
		show("srq qp queried", &sq.cap);
		ibv_destroy_qp(srq_qp);
	}
	ibv_destroy_qp(qp);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	return 0;
}
