/*
 * Address handles (ibv_create_ah(3), ibv_destroy_ah): the path a UD send names in wr.ud.ah. The simulated device
 * keeps the address vector (ProtectionDomain.createAh); the library keeps its handle.
 */
#include "rnicsim_verbs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sim_ah {
	struct ibv_ah ah;
	uint32_t handle;
};

uint32_t rnicsim_ah_handle(struct ibv_ah *ah)
{
	return ah ? ((struct sim_ah *)ah)->handle : 0;
}

EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	struct wire_create_ah req = {.pd = ((struct sim_pd *)pd)->handle,
				     .dlid = attr->dlid,
				     .is_global = attr->is_global,
				     .port_num = attr->port_num};
	memcpy(req.dgid, attr->grh.dgid.raw, 16);
	struct wire_handle resp = {0, 0};
	int e = rnicsim_rpc(OP_CREATE_AH, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_ah *a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->ah.handle = resp.handle;
	a->handle = resp.handle;
	return &a->ah;
}

EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct wire_handle req = {.handle = rnicsim_ah_handle(ah)};
	int e = rnicsim_rpc(OP_DESTROY_AH, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	free(ah);
	return 0;
}
