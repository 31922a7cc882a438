/*
 * What the device's provider offers beyond the basic verbs, read from the server once per context (CQEX_CAPS, from
 * sim-nic's ExtendedCqs) to fill the context's ops table as the provider fills its own: a verb the provider lacks
 * keeps a NULL op, and libibverbs' inline wrapper answers EOPNOTSUPP, as on the real stack (ibv_resize_cq, exported,
 * asks the same answer).
 *   - ibv_resize_cq (mlx5, mlx4, rxe, irdma): the model's rules (sim-nic CqResize): EINVAL below 1, above max_cqe or
 *     below the completions waiting to be polled, the size rounded as at creation;
 *   - ibv_query_rt_values_ex (mlx5): IBV_VALUES_MASK_RAW_CLOCK, the device's free-running clock in cycles of
 *     hca_core_clock, in raw_clock.tv_nsec with tv_sec 0 (mlx5_query_rt_values), from the fabric's simulated clock;
 *     another comp_mask bit is EINVAL;
 *   - ibv_alloc_td, ibv_alloc_parent_domain (mlx5): domains.c;
 *   - ibv_query_device_ex: completion_timestamp_mask and hca_core_clock of the profile (0 where the device has no
 *     completion clock, "not supported" in ibv_devinfo).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

struct ctx_caps {
	uint32_t ctx; /* the context's handle: never reused by the server, unlike a freed context's address */
	struct wire_cqex_caps caps;
	struct ctx_caps *next;
};

static struct ctx_caps *known; /* guarded by rnicsim_lock */

int rnicsim_cq_caps(struct ibv_context *ctx, struct wire_cqex_caps *caps)
{
	uint32_t h = rnicsim_ctx_handle(ctx);
	rnicsim_lock();
	for (struct ctx_caps *k = known; k; k = k->next)
		if (k->ctx == h) {
			*caps = k->caps;
			rnicsim_unlock();
			return 0;
		}
	rnicsim_unlock();
	struct wire_handle req = {.handle = h};
	struct ctx_caps *k = calloc(1, sizeof(*k));
	if (!k)
		return ENOMEM;
	int e = rnicsim_rpc(OP_CQEX_CAPS, &req, sizeof(req), NULL, 0, &k->caps, sizeof(k->caps), NULL);
	if (e) {
		free(k);
		return e;
	}
	k->ctx = h;
	*caps = k->caps;
	rnicsim_lock();
	k->next = known;
	known = k;
	rnicsim_unlock();
	return 0;
}

static int resize_cq(struct ibv_cq *cq, int cqe)
{
	struct sim_cq *c = (struct sim_cq *)cq;
	/* every completion of what was posted reaches this library first, so that the count below is whole */
	int e = rnicsim_rpc(OP_CQ_SYNC, NULL, 0, NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	rnicsim_lock();
	struct wire_resize_cq req = {.cq = c->handle, .cqe = (uint32_t)cqe, .held = c->count};
	/* a negative count reaches the model as asked (it answers EINVAL, as mlx5_resize_cq does) */
	struct wire_handle resp = {0};
	e = rnicsim_rpc(OP_RESIZE_CQ, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (!e)
		cq->cqe = (int)resp.handle;
	rnicsim_unlock();
	return e;
}

EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct wire_cqex_caps caps;
	int e = rnicsim_cq_caps(cq->context, &caps);
	if (e)
		return e;
	if (!(caps.features & WIRE_CQEX_RESIZE)) /* libibverbs: the provider has no resize_cq */
		return rnicsim_refuse("ibv_resize_cq", EOPNOTSUPP, "the provider of %s has no resize_cq, so libibverbs "
				      "answers EOPNOTSUPP (of rdma-core 44's providers only mlx4, mlx5, rxe and irdma "
				      "resize a CQ); CQ %u keeps its %d entries; fix: create the CQ with the depth it "
				      "will need", ibv_get_device_name(cq->context->device), cq->handle, cq->cqe);
	return resize_cq(cq, cqe);
}

static int query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *values)
{
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	uint32_t got = 0;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		struct wire_handle req = {.handle = rnicsim_ctx_handle(ctx)};
		uint64_t cycles = 0;
		int e = rnicsim_rpc(OP_QUERY_RT_VALUES, &req, sizeof(req), NULL, 0, &cycles, sizeof(cycles), NULL);
		if (e)
			return e;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)cycles;
		got |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = got;
	return 0;
}

void rnicsim_extended_device_attr(struct ibv_context *ctx, struct ibv_device_attr_ex *attr)
{
	struct wire_cqex_caps caps;
	if (rnicsim_cq_caps(ctx, &caps) == 0) {
		attr->completion_timestamp_mask = caps.timestamp_mask;
		attr->hca_core_clock = caps.hca_core_clock;
	}
	rnicsim_tm_caps(ctx, &attr->tm_caps); /* tm.c */
}

void rnicsim_set_extended_ops(struct verbs_context *vctx)
{
	struct wire_cqex_caps caps;
	if (rnicsim_cq_caps(&vctx->context, &caps))
		return; /* no answer: the context offers none of these verbs */
	if (caps.features & WIRE_CQEX_RT_VALUES)
		vctx->query_rt_values = query_rt_values;
	if (caps.features & WIRE_CQEX_DOMAINS)
		rnicsim_set_domain_ops(vctx);
}
