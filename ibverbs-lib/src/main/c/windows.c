/*
 * Memory windows: ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw through the context's ops table (verbs.h inlines
 * them and calls alloc_mw, dealloc_mw and bind_mw), and the BIND_MW work request a type 2 window is bound with.
 * The simulated device checks each bind when it executes, and a failed bind completes with IBV_WC_MW_BIND_ERR.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

struct sim_mw {
	struct ibv_mw mw;
	uint32_t handle;
};

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct wire_handle req = {.handle = ((struct sim_pd *)pd)->handle, .arg = type};
	struct wire_handle resp = {0};
	int e = rnicsim_rpc(OP_ALLOC_MW, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_mw *m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->handle = resp.handle;
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = resp.arg;
	m->mw.handle = resp.handle;
	m->mw.type = type;
	return &m->mw;
}

static int dealloc_mw(struct ibv_mw *mw)
{
	struct sim_mw *m = (struct sim_mw *)mw;
	struct wire_handle req = {.handle = m->handle};
	int e = rnicsim_rpc(OP_DEALLOC_MW, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	free(m);
	return 0;
}

/* A type 1 bind is a BIND_MW work request on the QP, as the providers post it (mlx5_bind_mw): the window shows its
 * next rkey from now on (ibv_inc_rkey), and the completion says whether the device accepted the bind. */
static int bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	int e = rnicsim_post_send(qp, &wr, &bad);
	if (e)
		return e;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

void rnicsim_wire_bind(const struct ibv_send_wr *w, struct wire_send_wr *s)
{
	const struct ibv_mw_bind_info *b = &w->bind_mw.bind_info;
	uint32_t mw = w->bind_mw.mw ? ((struct sim_mw *)w->bind_mw.mw)->handle : 0;
	uint32_t mr = b->mr ? ((struct sim_mr *)b->mr)->handle : 0;
	s->remote_addr = b->addr;
	s->compare_add = b->length;
	s->swap = ((uint64_t)mw << 32) | mr;
	s->rkey = w->bind_mw.rkey;
	s->imm_data = b->mw_access_flags;
}

void rnicsim_set_mw_ops(struct ibv_context *ctx)
{
	ctx->ops.alloc_mw = alloc_mw;
	ctx->ops.dealloc_mw = dealloc_mw;
	ctx->ops.bind_mw = bind_mw;
}
