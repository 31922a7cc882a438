/*
 * Shared receive queues: ibv_create_srq, ibv_modify_srq, ibv_query_srq, ibv_destroy_srq (exported), and
 * ibv_post_srq_recv (verbs.h inlines it through the context's ops table). A QP created with an SRQ takes its
 * receives from it; the simulated device checks each one as for a QP's own receive queue.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

struct sim_srq {
	struct ibv_srq srq;
	uint32_t handle;
	uint32_t max_sge;
	uint32_t srq_num; /* its number (ibv_get_srq_num); 0 where the provider answers EOPNOTSUPP */
	uint32_t max_wr;      /* a basic SRQ's granted max_wr; 0 for an XRC SRQ, whose receives other processes take */
	uint32_t outstanding; /* receives posted and not yet completed */
};

void rnicsim_srq_granted(struct ibv_srq *srq, uint32_t max_wr)
{
	((struct sim_srq *)srq)->max_wr = max_wr;
}

void rnicsim_srq_consumed(struct ibv_srq *srq)
{
	struct sim_srq *s = (struct sim_srq *)srq;
	if (s->outstanding > 0)
		s->outstanding--;
}

uint32_t rnicsim_srq_handle(struct ibv_srq *srq)
{
	return ((struct sim_srq *)srq)->handle;
}

uint32_t rnicsim_srq_num(struct ibv_srq *srq)
{
	return ((struct sim_srq *)srq)->srq_num;
}

/*
 * An SRQ of ibv_create_srq_ex the server made (XRC, TM): its struct, with what the device granted written back into
 * attr, as the providers report it; with counted, the library counts its outstanding receives against max_wr (an XRC
 * SRQ's receives are taken by other processes: not counted). NULL with errno when the request failed (err) or the
 * struct cannot be had.
 */
struct ibv_srq *rnicsim_srq_made(struct ibv_srq_init_attr_ex *attr, int err, uint32_t handle, uint32_t max_wr,
				 uint32_t max_sge, uint32_t srq_num, int counted)
{
	if (err) {
		errno = err;
		return NULL;
	}
	struct ibv_srq *s = rnicsim_srq_new(attr->pd, attr->srq_context, handle, max_sge, srq_num);
	if (!s)
		return NULL;
	if (counted)
		rnicsim_srq_granted(s, max_wr);
	attr->attr.max_wr = max_wr;
	attr->attr.max_sge = max_sge;
	return s;
}

struct ibv_srq *rnicsim_srq_new(struct ibv_pd *pd, void *srq_context, uint32_t handle, uint32_t max_sge,
				uint32_t srq_num)
{
	struct sim_srq *s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->handle = handle;
	s->max_sge = max_sge;
	s->srq_num = srq_num;
	s->srq.context = pd->context;
	s->srq.srq_context = srq_context;
	s->srq.pd = pd;
	s->srq.handle = handle;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	int refused = rnicsim_alloc_type_refuses(pd->context, "MLX_SRQ_ALLOC_TYPE");
	if (refused) {
		errno = refused;
		return NULL;
	}
	struct wire_srq req = {((struct sim_pd *)pd)->handle, attr->attr.max_wr, attr->attr.max_sge,
			       attr->attr.srq_limit};
	struct wire_srq resp = {0};
	int e = 0;
	void *bufs = rnicsim_pd_srq_bufs(pd, attr->attr.max_wr, attr->attr.max_sge, &e); /* a parent domain's */
	if (!e)
		e = rnicsim_rpc(OP_CREATE_SRQ, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		rnicsim_pd_bufs_put(bufs);
		errno = e;
		return NULL;
	}
	struct ibv_srq *s = rnicsim_srq_new(pd, attr->srq_context, resp.a, resp.c, resp.d);
	rnicsim_pd_bufs_bind(bufs, s);
	if (!s)
		return NULL;
	attr->attr.max_wr = resp.b; /* what the device granted, as the providers report it back */
	((struct sim_srq *)s)->max_wr = resp.b;
	attr->attr.max_sge = resp.c;
	return s;
}

EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct wire_srq req = {rnicsim_srq_handle(srq), (uint32_t)mask, attr->max_wr, attr->srq_limit};
	int e = rnicsim_rpc(OP_MODIFY_SRQ, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	struct sim_srq *s = (struct sim_srq *)srq;
	if (!e && (mask & IBV_SRQ_MAX_WR) && s->max_wr)
		s->max_wr = attr->max_wr; /* a resize the device took */
	return e;
}

EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct wire_handle req = {.handle = rnicsim_srq_handle(srq)};
	struct wire_srq resp = {0};
	int e = rnicsim_rpc(OP_QUERY_SRQ, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e)
		return e;
	attr->max_wr = resp.a;
	attr->max_sge = resp.b;
	attr->srq_limit = resp.c;
	return 0;
}

EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct wire_handle req = {.handle = rnicsim_srq_handle(srq)};
	int e = rnicsim_rpc(OP_DESTROY_SRQ, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e; /* EBUSY while QPs use it */
	rnicsim_pd_bufs_release(srq);
	free(srq);
	return 0;
}

static int post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sim_srq *s = (struct sim_srq *)srq;
	size_t len = sizeof(struct wire_post);
	unsigned count = 0;
	int e = 0;
	for (struct ibv_recv_wr *w = wr; w; w = w->next) {
		if (w->num_sge < 0 || (unsigned)w->num_sge > s->max_sge) {
			e = EINVAL; /* more SGEs than the SRQ's max_sge */
			*bad_wr = w;
			if (rnicsim_strict()) {
				char why[256];
				snprintf(why, sizeof(why), "receive wr_id %llu has num_sge %d > max_sge %u of the SRQ; fix: "
					 "split the scatter list or create the SRQ with a larger attr.max_sge",
					 (unsigned long long)w->wr_id, w->num_sge, s->max_sge);
				rnicsim_report_refusal("ibv_post_srq_recv", e, why);
			}
			break;
		}
		if (s->max_wr && s->outstanding + count >= s->max_wr) {
			e = ENOMEM; /* the SRQ is full (mlx5_post_srq_recv: no free WQE; rxe: queue_full) */
			*bad_wr = w;
			if (rnicsim_strict()) {
				char why[256];
				snprintf(why, sizeof(why), "the SRQ is full: %u receives posted and not yet consumed, max_wr %u; "
					 "fix: wait for completions before posting more or create the SRQ with a larger "
					 "attr.max_wr", s->outstanding + count, s->max_wr);
				rnicsim_report_refusal("ibv_post_srq_recv", e, why);
			}
			break;
		}
		len += sizeof(struct wire_recv_wr) + w->num_sge * sizeof(struct wire_sge);
		count++;
	}
	if (!count)
		return e;
	char *msg = malloc(sizeof(struct wire_hdr) + len);
	if (!msg) {
		*bad_wr = wr;
		return ENOMEM;
	}
	size_t off = sizeof(struct wire_hdr);
	struct wire_post *p = (struct wire_post *)(msg + off);
	p->qp = s->handle;
	p->count = count;
	off += sizeof(*p);
	struct ibv_recv_wr *w = wr;
	for (unsigned i = 0; i < count; i++, w = w->next) {
		struct wire_recv_wr *r = (struct wire_recv_wr *)(msg + off);
		r->wr_id = w->wr_id;
		r->num_sge = w->num_sge;
		r->pad = 0;
		off += sizeof(*r);
		for (int k = 0; k < w->num_sge; k++) {
			struct wire_sge *g = (struct wire_sge *)(msg + off);
			g->addr = w->sg_list[k].addr;
			g->length = w->sg_list[k].length;
			g->lkey = w->sg_list[k].lkey;
			off += sizeof(*g);
		}
	}
	struct iovec iov[2] = {{msg, sizeof(struct wire_hdr)}, {msg + sizeof(struct wire_hdr), len}};
	rnicsim_lock();
	int we = rnicsim_doorbell(OP_POST_SRQ_RECV, iov, 2);
	rnicsim_unlock();
	free(msg);
	if (we && !e) {
		*bad_wr = wr;
		return we;
	}
	if (!we)
		s->outstanding += count;
	return e;
}

void rnicsim_set_srq_ops(struct ibv_context *ctx)
{
	ctx->ops.post_srq_recv = post_srq_recv;
}
