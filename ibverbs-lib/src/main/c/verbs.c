/*
 * The control verbs: PD, MR, CQ, completion channel, QP. Each is one request to the fabric server, where the
 * simulated device checks it with the rules of the real stack and answers the errno a real stack gives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct wire_handle req = {.handle = rnicsim_ctx_handle(ctx)};
	struct wire_handle resp = {0};
	int e = rnicsim_rpc(OP_ALLOC_PD, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_pd *pd = calloc(1, sizeof(*pd));
	pd->pd.context = ctx;
	pd->pd.handle = resp.handle;
	pd->handle = resp.handle;
	rnicsim_pd_created(pd);
	return &pd->pd;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	int handled, busy = rnicsim_pd_dealloc(pd, &handled); /* a parent domain, or a PD under one (domains.c) */
	if (handled)
		return busy;
	struct sim_pd *p = (struct sim_pd *)pd;
	struct wire_handle req = {.handle = p->handle};
	int e = rnicsim_rpc(OP_DEALLOC_PD, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	rnicsim_pd_gone(p);
	free(p);
	return 0;
}

struct ibv_mr *rnicsim_mr_new(struct ibv_pd *pd, const struct wire_mr_resp *resp, void *addr, size_t length)
{
	struct sim_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) {
		struct wire_handle f = {.handle = resp->mr};
		rnicsim_rpc(OP_DEREG_MR, &f, sizeof(f), NULL, 0, NULL, 0, NULL);
		errno = ENOMEM;
		return NULL;
	}
	mr->handle = resp->mr;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = resp->mr;
	mr->mr.lkey = resp->lkey;
	mr->mr.rkey = resp->rkey;
	rnicsim_mr_created(mr);
	return &mr->mr;
}

static struct ibv_mr *reg_mr(const char *verb, struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			     unsigned int access)
{
	char site[CALLSITE_BYTES];
	site[0] = 0;
	if (rnicsim_strict())
		rnicsim_callsite(verb, site, sizeof(site));
	/* the optional range (bits 20..28): libibverbs clears it where the kernel has no optional access, and the
	 * kernel takes the bits it does not implement without failing (IB_ACCESS_OPTIONAL in ib_check_mr_access's
	 * IB_ACCESS_SUPPORTED); only RELAXED_ORDERING means something to the device */
	access &= ~(IBV_ACCESS_OPTIONAL_RANGE & ~IBV_ACCESS_RELAXED_ORDERING);
	struct wire_reg_mr req = {.pd = ((struct sim_pd *)pd)->handle,
				  .access = access,
				  .addr = (uint64_t)(uintptr_t)addr,
				  .length = length,
				  .iova = iova};
	struct wire_mr_resp resp = {0};
	int e = rnicsim_rpc(OP_REG_MR, &req, sizeof(req), site, strlen(site), &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	return rnicsim_mr_new(pd, &resp, addr, length);
}

EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr("ibv_reg_mr", pd, addr, length, (uint64_t)(uintptr_t)addr, (unsigned int)access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return reg_mr("ibv_reg_mr_iova", pd, addr, length, iova, (unsigned int)access);
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				       unsigned int access)
{
	return reg_mr("ibv_reg_mr_iova2", pd, addr, length, iova, access);
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct sim_mr *m = (struct sim_mr *)mr;
	char site[CALLSITE_BYTES];
	site[0] = 0;
	if (rnicsim_strict())
		rnicsim_callsite("ibv_dereg_mr", site, sizeof(site));
	struct wire_handle req = {.handle = m->handle};
	int e = rnicsim_rpc(OP_DEREG_MR, &req, sizeof(req), site, strlen(site), NULL, 0, NULL);
	if (e)
		return e;
	rnicsim_mr_gone(m);
	free(m);
	return 0;
}

EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct sim_channel *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	/* blocking, as the kernel's channel fd: ibv_get_cq_event waits in read(); a program may make it non-blocking
	 * (fcntl O_NONBLOCK) and poll it */
	c->channel.context = ctx;
	c->channel.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	c->channel.refcnt = 0;
	int e = c->channel.fd < 0 ? errno : rnicsim_events_start();
	if (e) {
		if (c->channel.fd >= 0)
			close(c->channel.fd);
		free(c);
		errno = e;
		return NULL;
	}
	return &c->channel;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct sim_channel *c = (struct sim_channel *)channel;
	if (channel->refcnt)
		return EBUSY; /* CQs still use it, as libibverbs answers */
	close(channel->fd);
	free(c->events);
	free(c);
	return 0;
}

struct sim_cq *rnicsim_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel)
{
	return rnicsim_create_cq_on(ctx, cqe, cq_context, channel, 0);
}

struct sim_cq *rnicsim_create_cq_on(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel,
				    uint32_t comp_vector)
{
	if (cqe < 0) {
		/* the providers take cqe as an unsigned count: a negative one is above any max_cqe (mlx5_create_cq:
		 * more than 0x7fffffff entries, EINVAL) */
		errno = rnicsim_refuse("ibv_create_cq", EINVAL, "cqe=%d is negative: the provider takes it as %u "
				       "entries, above max_cqe (mlx5_create_cq: EINVAL above 2^31 - 1); fix: ask for "
				       "1 to max_cqe entries (ibv_query_device)", cqe, (unsigned)cqe);
		return NULL;
	}
	int refused = rnicsim_alloc_type_refuses(ctx, "MLX_CQ_ALLOC_TYPE");
	if (refused) {
		errno = refused;
		return NULL;
	}
	struct wire_create_cq req = {.ctx = rnicsim_ctx_handle(ctx), .cqe = (uint32_t)cqe, .comp_vector = comp_vector};
	struct wire_create_cq resp = {0};
	int e = rnicsim_rpc(OP_CREATE_CQ, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	return rnicsim_cq_new(ctx, resp.ctx, resp.cqe, cq_context, channel);
}

/* The library's side of a CQ the server created (its handle and granted cqe). */
struct sim_cq *rnicsim_cq_new(struct ibv_context *ctx, uint32_t handle, uint32_t cqe, void *cq_context,
			      struct ibv_comp_channel *channel)
{
	struct sim_cq *cq = calloc(1, sizeof(*cq));
	cq->handle = handle;
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = handle;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	cq->cap = 64;
	while (cq->cap < 2 * cqe + 2)
		cq->cap *= 2;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	if (channel)
		channel->refcnt++;
	rnicsim_register_cq(cq);
	return cq;
}

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector)
{
	struct sim_cq *cq = rnicsim_create_cq_on(ctx, cqe, cq_context, channel, (uint32_t)comp_vector);
	return cq ? &cq->cq : NULL;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct sim_cq *c = (struct sim_cq *)cq;
	struct wire_handle req = {.handle = c->handle};
	int e = rnicsim_rpc(OP_DESTROY_CQ, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	rnicsim_unregister_cq(c);
	rnicsim_pd_bufs_release(c);
	if (cq->channel)
		cq->channel->refcnt--;
	free(c->stamps);
	free(c->tm_tags);
	free(c->ring);
	free(c);
	return 0;
}

EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct sim_channel *c = (struct sim_channel *)channel;
	/* as libibverbs: one read of the channel's fd, which waits unless the program made it non-blocking (then -1
	 * with EAGAIN when no event is there); the library's thread counts each event into it (events.c) */
	uint64_t one;
	if (read(channel->fd, &one, sizeof(one)) != sizeof(one))
		return -1;
	rnicsim_lock();
	struct sim_cq *s = c->events[0];
	memmove(c->events, c->events + 1, (c->events_len - 1) * sizeof(*c->events));
	c->events_len--;
	rnicsim_unlock();
	*cq = &s->cq;
	*cq_context = s->cq.cq_context;
	return 0;
}

EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_mutex_unlock(&cq->mutex);
}

struct ibv_qp *rnicsim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	/* an XRC_RECV QP is created in an XRC domain, with no PD and no CQ; an XRC_SEND QP has no receive CQ */
	int xrc_recv = attr->qp_type == IBV_QPT_XRC_RECV;
	if (xrc_recv ? !(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd
		     : !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask &
	    ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			IBV_QP_INIT_ATTR_CREATE_FLAGS)) {
		errno = EOPNOTSUPP; /* RSS, creation flags and the other extensions are not simulated here */
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (attr->send_ops_flags >> 31)) {
		errno = EOPNOTSUPP; /* no provider builds ibv_wr_* functions for bits libibverbs does not define */
		return NULL;
	}
	if (!xrc_recv && (!attr->send_cq || (!attr->recv_cq && attr->qp_type != IBV_QPT_XRC_SEND))) {
		errno = EINVAL;
		return NULL;
	}
	int refused = xrc_recv ? 0 : rnicsim_alloc_type_refuses(ctx, "MLX_QP_ALLOC_TYPE");
	if (refused) {
		errno = refused;
		return NULL;
	}
	struct wire_create_qp req = {.pd = xrc_recv ? rnicsim_xrcd_handle(attr->xrcd) : ((struct sim_pd *)attr->pd)->handle,
				     .send_cq = attr->send_cq ? ((struct sim_cq *)attr->send_cq)->handle : 0,
				     .recv_cq = attr->recv_cq ? ((struct sim_cq *)attr->recv_cq)->handle : 0,
				     .qp_type = attr->qp_type,
				     .sq_sig_all = (uint32_t)attr->sq_sig_all,
				     .srq = attr->srq ? rnicsim_srq_handle(attr->srq) : 0,
				     .cap = {attr->cap.max_send_wr, attr->cap.max_recv_wr, attr->cap.max_send_sge,
					     attr->cap.max_recv_sge, attr->cap.max_inline_data, 0},
				     /* the device's driver takes or refuses them (QpCreateFlags) */
				     .create_flags = attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS ? attr->create_flags : 0};
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) /* the provider's table takes or refuses them (SendOps) */
		req.send_ops_flags = WIRE_SEND_OPS_GIVEN | (uint32_t)(attr->send_ops_flags & 0x3fffffff) |
				     (attr->send_ops_flags >> 30 ? WIRE_SEND_OPS_UNKNOWN : 0);
	struct wire_qp_resp resp;
	memset(&resp, 0, sizeof(resp));
	int e = 0;
	void *bufs = xrc_recv ? NULL : rnicsim_pd_qp_bufs(attr->pd, attr, &e); /* a parent domain's allocator */
	if (!e)
		e = rnicsim_rpc(OP_CREATE_QP, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		rnicsim_pd_bufs_put(bufs);
		errno = e;
		return NULL;
	}
	struct sim_qp *qp = calloc(1, sizeof(*qp));
	struct ibv_qp *q = &qp->qpx.qp_base;
	qp->handle = resp.qp;
	qp->cap = resp.cap;
	qp->post_rules = resp.post_rules;
	qp->sq_sig_all = attr->sq_sig_all;
	q->context = ctx;
	q->qp_context = attr->qp_context;
	q->pd = xrc_recv ? NULL : attr->pd;
	q->send_cq = attr->send_cq;
	q->recv_cq = attr->recv_cq;
	q->srq = attr->srq;
	q->handle = resp.qp;
	q->qp_num = resp.qp_num;
	q->state = IBV_QPS_RESET;
	q->qp_type = attr->qp_type;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	attr->cap.max_send_wr = resp.cap.max_send_wr;
	attr->cap.max_recv_wr = resp.cap.max_recv_wr;
	attr->cap.max_send_sge = resp.cap.max_send_sge;
	attr->cap.max_recv_sge = resp.cap.max_recv_sge;
	attr->cap.max_inline_data = resp.cap.max_inline_data;
	qp->init.qp_context = attr->qp_context;
	qp->init.send_cq = attr->send_cq;
	qp->init.recv_cq = attr->recv_cq;
	qp->init.cap = attr->cap;
	qp->init.qp_type = attr->qp_type;
	qp->init.sq_sig_all = attr->sq_sig_all;
	rnicsim_set_qpx_ops(qp);
	rnicsim_set_xrc_qpx_ops(qp);
	rnicsim_pd_bufs_bind(bufs, qp);
	rnicsim_register_qp(qp);
	return q;
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	struct ibv_qp *qp = rnicsim_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return &((struct sim_qp *)qp)->qpx;
}

/* A read/atomic depth as the driver keeps it: rounded up to a power of two, 0 staying 0, in a u8 (sim-nic
 * QpAttrValues: rxe keeps roundup_pow_of_two(129..255) = 256 in struct ib_qp_attr's u8 field as 0) */
static uint8_t rd_atomic_depth(uint8_t n)
{
	unsigned p = 1;
	while (p < n)
		p <<= 1;
	return n ? (uint8_t)p : 0;
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	struct wire_modify_qp req = {.qp = q->handle,
				     .attr_mask = (uint32_t)mask,
				     .qp_state = attr->qp_state,
				     .qp_access_flags = attr->qp_access_flags,
				     .dest_qp_num = attr->dest_qp_num,
				     .rq_psn = attr->rq_psn,
				     .sq_psn = attr->sq_psn,
				     .path_mtu = attr->path_mtu,
				     .timeout = attr->timeout,
				     .retry_cnt = attr->retry_cnt,
				     .rnr_retry = attr->rnr_retry,
				     .min_rnr_timer = attr->min_rnr_timer,
				     .dlid = attr->ah_attr.dlid,
				     .is_global = attr->ah_attr.is_global,
				     .cur_qp_state = attr->cur_qp_state,
				     .port_num = attr->port_num,
				     .pkey_index = attr->pkey_index,
				     .max_rd_atomic = attr->max_rd_atomic,
				     .max_dest_rd_atomic = attr->max_dest_rd_atomic,
				     .ah_port_num = attr->ah_attr.port_num,
				     .ah_sgid_index = attr->ah_attr.grh.sgid_index};
	memcpy(req.dgid, attr->ah_attr.grh.dgid.raw, 16);
	req.qkey = attr->qkey;
	int e = rnicsim_rpc(OP_MODIFY_QP, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	if (mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		/* RESET empties both queues (mlx5_modify_qp, rxe_qp_reset): the whole send queue is free again */
		q->outstanding_recvs = 0;
		q->outstanding_sends = 0;
		rnicsim_reset_clean_cqs(q);
		/* what ibv_query_qp shows after RESET: rxe keeps the attributes (rxe_qp_reset leaves qp->attr), mlx4 and
		 * mlx5 answer 0 (sim-nic ProviderRule RESET_KEEPS_QP_ATTRS) */
		if (!(q->post_rules & WIRE_POST_RESET_KEEPS_ATTRS))
			memset(&q->attr, 0, sizeof(q->attr));
	}
	if (mask & IBV_QP_ACCESS_FLAGS)
		q->attr.qp_access_flags = attr->qp_access_flags;
	if (mask & IBV_QP_AV)
		q->attr.ah_attr = attr->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		q->attr.path_mtu = attr->path_mtu;
	/* dest_qp_num whole on rxe (rxe_qp_from_attr), in the QP context's 24 bits elsewhere (mlx5 remote_qpn) */
	if (mask & IBV_QP_DEST_QPN)
		q->attr.dest_qp_num = (q->post_rules & WIRE_POST_DEST_QPN_WHOLE) ? attr->dest_qp_num
										: attr->dest_qp_num & 0xffffff;
	/* kept as the driver keeps them (sim-nic QpAttrValues): PSNs in 24 bits (the core's _ib_modify_qp); the ACK
	 * timeout in 5 bits (rxe refused more); retry_cnt, rnr_retry and min_rnr_timer whole on rxe, in their 3, 3 and
	 * 5 bits of the QP context on mlx5 */
	int whole = q->post_rules & WIRE_POST_QP_FIELDS_WHOLE;
	if (mask & IBV_QP_RQ_PSN)
		q->attr.rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IBV_QP_SQ_PSN)
		q->attr.sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IBV_QP_TIMEOUT)
		q->attr.timeout = attr->timeout & 0x1f;
	if (mask & IBV_QP_RETRY_CNT)
		q->attr.retry_cnt = whole ? attr->retry_cnt : attr->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)
		q->attr.rnr_retry = whole ? attr->rnr_retry : attr->rnr_retry & 7;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		q->attr.min_rnr_timer = whole ? attr->min_rnr_timer : attr->min_rnr_timer & 0x1f;
	/* read/atomic depths rounded up to a power of two (rxe roundup_pow_of_two, mlx5's log_sra_max/log_rra_max);
	 * mlx4 and mlx5 leave the log at 0 for a depth of 0, which their query answers as 1 */
	int zero_as_one = q->post_rules & WIRE_POST_RD_ATOMIC_ZERO_AS_ONE;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		q->attr.max_rd_atomic = (zero_as_one && !attr->max_rd_atomic) ? 1 : rd_atomic_depth(attr->max_rd_atomic);
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		q->attr.max_dest_rd_atomic = (zero_as_one && !attr->max_dest_rd_atomic)
						     ? 1
						     : rd_atomic_depth(attr->max_dest_rd_atomic);
	if (mask & IBV_QP_PORT)
		q->attr.port_num = attr->port_num;
	if (mask & IBV_QP_PKEY_INDEX)
		q->attr.pkey_index = attr->pkey_index;
	if (mask & IBV_QP_QKEY)
		q->attr.qkey = attr->qkey;
	return 0;
}

EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask, struct ibv_qp_init_attr *init_attr)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	/* the state is the device's: an error completion moves the QP to ERR without a modify */
	struct wire_handle req = {.handle = q->handle};
	struct wire_handle resp = {0};
	int e = rnicsim_rpc(OP_QUERY_QP, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e)
		return e;
	qp->state = resp.handle;
	*attr = q->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = q->init.cap;
	if (qp->srq) {
		/* a QP on an SRQ has no receive queue, and the kernel answers its sizes, 0 (rxe_qp_to_init leaves the
		 * receive caps of a QP with an SRQ untouched in the zeroed answer; mlx4_ib_query_qp and mlx5_ib_query_qp
		 * answer rq.wqe_cnt and rq.max_gs, 0), even where ibv_create_qp gave them back as asked (rxe) */
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	}
	if (init_attr) {
		*init_attr = q->init;
		init_attr->cap = attr->cap;
	}
	return 0;
}

/* libibverbs calls the provider's query_qp_data_in_order (x86: the only architecture it answers for), which the
 * device's profile models: 1 from mlx5 for a QP in RTS, 0 from a provider without the verb */
EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	struct wire_handle req = {.handle = ((struct sim_qp *)qp)->handle};
	struct wire_handle resp = {0};
	if (flags || rnicsim_rpc(OP_QUERY_QP, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL))
		return 0;
	return resp.arg ? 1 : 0;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	struct wire_handle req = {.handle = q->handle};
	int e = rnicsim_rpc(OP_DESTROY_QP, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	rnicsim_unregister_qp(q);
	rnicsim_pd_bufs_release(q);
	for (unsigned i = 0; i < QPX_MAX_WR; i++)
		free(q->inline_bufs[i]);
	free(q);
	return 0;
}

EXPORT int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	uint64_t v;
	/* no asynchronous event is ever raised: this waits, as it does on a device where nothing happens */
	if (read(ctx->async_fd, &v, sizeof(v)) < 0)
		return -1;
	errno = EIO;
	return -1;
}

EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
}

EXPORT int ibv_fork_init(void)
{
	return 0;
}

EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED; /* the kernels this runs on copy pinned pages at fork (copy_page_range) */
}

EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return 0;
}
