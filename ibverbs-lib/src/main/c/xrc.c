/*
 * XRC (extended reliable connected transport): ibv_open_xrcd, ibv_close_xrcd, ibv_create_srq_ex of type XRC and
 * ibv_get_srq_num, reached through the verbs_context ops as <infiniband/verbs.h> inlines them, and
 * ibv_wr_set_xrc_srqn, and ibv_open_qp. The simulated device checks each one (XRC on the device, a live domain and CQ of the context,
 * the XRC SRQ a message names belongs to the target QP's domain); XRC_RECV and XRC_SEND QPs are created by
 * ibv_create_qp_ex (verbs.c) and post their sends in post.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rnicsim_verbs.h"
#include "wire_mr.h"

struct sim_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t handle;
};

uint32_t rnicsim_xrcd_handle(struct ibv_xrcd *xrcd)
{
	return xrcd ? ((struct sim_xrcd *)xrcd)->handle : 0;
}

/*
 * ibv_open_xrcd(3): both IBV_XRCD_INIT_ATTR_FD and _OFLAGS are required and no other bit is known (libibverbs'
 * ibv_cmd_open_xrcd: EINVAL, EOPNOTSUPP); a file names the domain by its inode (fd -1: a new domain), so the file's
 * st_dev and st_ino go to the server, which answers as ib_uverbs_open_xrcd does: EBADF for a bad fd, EAGAIN when no
 * domain has that inode and O_CREAT is not given, EINVAL with O_EXCL when one has.
 */
static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *attr)
{
	if (!attr || attr->comp_mask >= IBV_XRCD_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS)) {
		errno = EINVAL;
		return NULL;
	}
	struct wire_open_xrcd req = {.ctx = rnicsim_ctx_handle(ctx), .oflags = (uint32_t)attr->oflags};
	if (attr->fd != -1) {
		struct stat st;
		if (fstat(attr->fd, &st) != 0) {
			errno = EBADF;
			return NULL;
		}
		req.has_file = 1;
		req.st_dev = st.st_dev;
		req.st_ino = st.st_ino;
	}
	struct wire_handle resp = {0, 0};
	int e = rnicsim_rpc(OP_OPEN_XRCD, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_xrcd *x = calloc(1, sizeof(*x));
	if (!x) {
		errno = ENOMEM;
		return NULL;
	}
	x->xrcd.context = ctx;
	x->handle = resp.handle;
	return &x->xrcd;
}

static int close_xrcd(struct ibv_xrcd *xrcd)
{
	struct wire_handle req = {.handle = rnicsim_xrcd_handle(xrcd)};
	int e = rnicsim_rpc(OP_CLOSE_XRCD, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e; /* EBUSY while an XRC SRQ or XRC_RECV QP of the domain lives */
	free(xrcd);
	return 0;
}

/*
 * ibv_create_srq_ex(3). The inline of <infiniband/verbs.h> sends a basic SRQ with PD and TYPE only to ibv_create_srq;
 * what arrives here is an XRC SRQ (PD, XRCD and CQ all required: mlx5_create_srq_ex), a basic SRQ with more bits
 * (made as ibv_create_srq makes it), or a tag-matching SRQ (tm.c).
 */
static struct ibv_srq *create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;
	if (mask >= IBV_SRQ_INIT_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	enum ibv_srq_type type = (mask & IBV_SRQ_INIT_ATTR_TYPE) ? attr->srq_type : IBV_SRQT_BASIC;
	if (type == IBV_SRQT_BASIC) {
		if (!(mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
			errno = EINVAL;
			return NULL;
		}
		return ibv_create_srq(attr->pd, (struct ibv_srq_init_attr *)attr);
	}
	if (type == IBV_SRQT_TM)
		return rnicsim_create_tm_srq(ctx, attr); /* tm.c */
	if (type != IBV_SRQT_XRC) {
		errno = EINVAL; /* no other type (mlx5_create_srq_ex) */
		return NULL;
	}
	if (!(mask & IBV_SRQ_INIT_ATTR_PD) || !(mask & IBV_SRQ_INIT_ATTR_XRCD) || !(mask & IBV_SRQ_INIT_ATTR_CQ) ||
	    !attr->pd || !attr->xrcd || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}
	struct wire_xrc_srq req = {.pd = ((struct sim_pd *)attr->pd)->handle,
				   .xrcd = rnicsim_xrcd_handle(attr->xrcd),
				   .cq = ((struct sim_cq *)attr->cq)->handle,
				   .max_wr = attr->attr.max_wr,
				   .max_sge = attr->attr.max_sge,
				   .srq_limit = attr->attr.srq_limit};
	struct wire_xrc_srq_resp resp;
	memset(&resp, 0, sizeof(resp));
	int e = rnicsim_rpc(OP_CREATE_XRC_SRQ, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	return rnicsim_srq_made(attr, e, resp.srq, resp.max_wr, resp.max_sge, resp.srq_num, 0);
}

/* ibv_get_srq_num(3): the number an XRC_SEND QP names in wr.qp_type.xrc.remote_srqn, as the device's provider
 * answers it: mlx5_get_srq_num for any SRQ, mlx4_get_srq_num for an XRC SRQ only (EOPNOTSUPP), and a provider
 * without XRC (rxe) has no get_srq_num: libibverbs' stand-in answers EOPNOTSUPP. The server answers 0 as the number
 * of an SRQ that has none. */
static int get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	uint32_t n = rnicsim_srq_num(srq);
	if (!n)
		return EOPNOTSUPP;
	*srq_num = n;
	return 0;
}

/*
 * ibv_open_qp(3): an XRC target QP (IBV_QPT_XRC_RECV) of the XRC domain, by its number, made by this or another
 * process. A device without XRC has no open_qp in its provider (rdma-core 44: mlx4, mlx5 and hns have one):
 * EOPNOTSUPP before the attributes are read, as libibverbs' stand-in answers. Then ibv_cmd_open_qp's mask checks:
 * a bit past IBV_QP_OPEN_ATTR_TYPE is EOPNOTSUPP, a missing XRCD, NUM or TYPE EINVAL (the provider returns NULL
 * without setting errno for these two; this library sets it to the value). The rest is the kernel's (sim-nic XrcOpen):
 * EINVAL for a domain that is not a live one of the context, a type other than XRC_RECV, or a number that names no
 * target QP of the domain. The QP is opened in the state the device has it in: ibv_query_qp tells it.
 */
static struct ibv_qp *open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr)
{
	struct ibv_device_attr da;
	if (ibv_query_device(ctx, &da) == 0 && !(da.device_cap_flags & IBV_DEVICE_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask >= IBV_QP_OPEN_ATTR_RESERVED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	uint32_t need = IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_TYPE;
	if ((attr->comp_mask & need) != need) {
		errno = EINVAL;
		return NULL;
	}
	struct wire_open_qp req = {.ctx = rnicsim_ctx_handle(ctx),
				   .xrcd = rnicsim_xrcd_handle(attr->xrcd),
				   .qp_num = attr->qp_num,
				   .qp_type = attr->qp_type};
	struct wire_handle resp = {0, 0};
	int e = rnicsim_rpc(OP_OPEN_QP, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_qp *qp = calloc(1, sizeof(*qp));
	if (!qp) {
		struct wire_handle d = {.handle = resp.handle};
		rnicsim_rpc(OP_DESTROY_QP, &d, sizeof(d), NULL, 0, NULL, 0, NULL);
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_qp *q = &qp->qpx.qp_base;
	qp->handle = resp.handle;
	q->context = ctx;
	q->qp_context = attr->qp_context;
	q->handle = resp.handle;
	q->qp_num = resp.arg;
	q->qp_type = IBV_QPT_XRC_RECV;
	q->state = IBV_QPS_UNKNOWN; /* as ibv_cmd_open_qp leaves it */
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	qp->init.qp_context = attr->qp_context;
	qp->init.qp_type = IBV_QPT_XRC_RECV;
	rnicsim_set_qpx_ops(qp);
	rnicsim_set_xrc_qpx_ops(qp);
	rnicsim_register_qp(qp);
	return q;
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct sim_qp *q = (struct sim_qp *)qpx;
	if (q->nwr)
		q->wrs[q->nwr - 1].qp_type.xrc.remote_srqn = remote_srqn;
}

void rnicsim_set_xrc_qpx_ops(struct sim_qp *qp)
{
	qp->qpx.wr_set_xrc_srqn = wr_set_xrc_srqn;
}

void rnicsim_set_xrc_ops(struct verbs_context *vctx)
{
	vctx->open_xrcd = open_xrcd;
	vctx->close_xrcd = close_xrcd;
	vctx->create_srq_ex = create_srq_ex;
	vctx->get_srq_num = get_srq_num;
	vctx->open_qp = open_qp;
	rnicsim_set_tm_ops(vctx); /* tm.c: ibv_post_srq_ops */
}
