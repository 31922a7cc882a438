/*
 * ibv_query_qp of an RC QP connected, moved to ERR, then to RESET: one line per step with what the query reports,
 * which QpResetQueryProgramTest compares with the driver's answer (mlx4 and mlx5: the attributes read 0 after
 * RESET; rxe: the attributes given before, as rxe_qp_reset leaves them).
 */
#include "checks.h"

static void show(const char *when, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	memset(&a, 0, sizeof(a));
	int e = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT |
					 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER | IBV_QP_DEST_QPN,
			     &ia);
	printf("%s: errno %d state %d attrs port %u access 0x%x path_mtu %d timeout %u retry_cnt %u rnr_retry %u "
	       "min_rnr_timer %u dest_qp_num 0x%x\n",
	       when, e, (int)a.qp_state, a.port_num, a.qp_access_flags, (int)a.path_mtu, a.timeout, a.retry_cnt,
	       a.rnr_retry, a.min_rnr_timer, a.dest_qp_num);
	fflush(stdout);
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	open_first_device(&ctx, &pd);
	/* a RoCE port has no LID: connect by a global route to the port's own GID */
	struct ibv_port_attr port;
	union ibv_gid gid;
	int roce = ibv_query_port(ctx, 1, &port) == 0 && port.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (roce && ibv_query_gid(ctx, 1, 0, &gid)) {
		perror("ibv_query_gid");
		return 2;
	}
	struct pair p;
	p.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = p.cq, .recv_cq = p.cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	p.a = p.cq ? ibv_create_qp(pd, &ia) : NULL;
	p.b = p.cq ? ibv_create_qp(pd, &ia) : NULL;
	if (!p.a || !p.b ||
	    loopback_connect_path(p.a, p.b->qp_num, lid, roce ? &gid : NULL, IBV_MTU_1024, qp_access) ||
	    loopback_connect_path(p.b, p.a->qp_num, lid, roce ? &gid : NULL, IBV_MTU_1024, qp_access)) {
		perror("connecting a QP pair");
		return 2;
	}
	show("rts", p.a);
	struct ibv_qp_attr to = {.qp_state = IBV_QPS_ERR};
	if (ibv_modify_qp(p.a, &to, IBV_QP_STATE)) {
		perror("to ERR");
		return 2;
	}
	show("err", p.a);
	to.qp_state = IBV_QPS_RESET;
	if (ibv_modify_qp(p.a, &to, IBV_QP_STATE)) {
		perror("to RESET");
		return 2;
	}
	show("reset", p.a);
	pair_free(p);
	return 0;
}
