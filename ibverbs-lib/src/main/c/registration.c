/*
 * Registration verbs beyond ibv_reg_mr: ibv_rereg_mr (exported) and ibv_advise_mr (verbs.h inlines it through the
 * extended ops table). The simulated device checks them with the rules of libibverbs, the kernel and mlx5.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

/* ibv_rereg_mr(3): 0, or a negative IBV_REREG_MR_ERR_* with errno set. With ERR_INPUT the MR is unchanged; with
 * ERR_CMD the kernel refused and the MR may only be deregistered. */
EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct sim_mr *m = (struct sim_mr *)mr;
	struct wire_rereg_mr req = {.mr = m->handle,
				    .flags = (uint32_t)flags,
				    .pd = pd && (flags & IBV_REREG_MR_CHANGE_PD) ? ((struct sim_pd *)pd)->handle : 0,
				    .access = (uint32_t)access,
				    .addr = (uint64_t)(uintptr_t)addr,
				    .length = length};
	struct wire_rereg_resp resp = {0};
	int e = rnicsim_rpc(OP_REREG_MR, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (resp.err) {
		errno = resp.err;
		return resp.rereg_err;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	return 0;
}

static int advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list,
		     uint32_t num_sges)
{
	if (num_sges > 4096)
		return EINVAL;
	struct wire_advise_mr req = {.pd = ((struct sim_pd *)pd)->handle,
				     .advice = advice,
				     .flags = flags,
				     .num_sge = num_sges};
	struct wire_sge *sges = calloc(num_sges ? num_sges : 1, sizeof(*sges));
	if (!sges)
		return ENOMEM;
	for (uint32_t i = 0; i < num_sges; i++) {
		sges[i].addr = sg_list[i].addr;
		sges[i].length = sg_list[i].length;
		sges[i].lkey = sg_list[i].lkey;
	}
	int e = rnicsim_rpc(OP_ADVISE_MR, &req, sizeof(req), sges, num_sges * sizeof(*sges), NULL, 0, NULL);
	free(sges);
	return e;
}

void rnicsim_set_registration_ops(struct verbs_context *vctx)
{
	vctx->advise_mr = advise_mr;
}
