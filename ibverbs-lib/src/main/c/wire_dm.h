/*
 * The device-memory messages between this library and the fabric server (dev.rnicsim.ibverbs.DmVerbs mirrors them),
 * numbered apart from wire.h's, in the same framing and layout rules.
 *
 *   DM_CAPS    wire_handle {ctx}                       -> wire_dm_caps
 *   ALLOC_DM   wire_alloc_dm                           -> wire_dm_resp
 *   FREE_DM    wire_handle {dm}                        -> nothing (err EBUSY while an MR uses it)
 *   REG_DM_MR  wire_reg_dm_mr, then the call site text -> wire_mr_resp (the MR is then an MR like any other:
 *                                                         ibv_dereg_mr sends DEREG_MR)
 *
 * The device memory's bytes live in a shared anonymous mapping of the process (as mlx5 maps the MEMIC BAR pages
 * into it at ibv_alloc_dm): ibv_memcpy_to_dm and ibv_memcpy_from_dm copy there with no message, and REG_DM_MR tells
 * the server the mapping's address, where the server moves the bytes of work requests that name the MR.
 */
#ifndef RNICSIM_WIRE_DM_H
#define RNICSIM_WIRE_DM_H

#include <stdint.h>

#define OP_DM_CAPS 80
#define OP_ALLOC_DM 81
#define OP_FREE_DM 82
#define OP_REG_DM_MR 83

struct wire_dm_caps {
	uint64_t max_dm_size; /* ibv_query_device_ex's max_dm_size: 0 for a device without device memory */
};

struct wire_alloc_dm {
	uint32_t ctx;
	uint32_t log_align_req;
	uint32_t comp_mask;
	uint32_t pad;
	uint64_t length;
};

struct wire_dm_resp {
	uint32_t dm;
	uint32_t copy_granule; /* offsets and lengths of the copies are multiples of it (4 on mlx5) */
};

struct wire_reg_dm_mr {
	uint32_t pd;
	uint32_t dm;
	uint32_t access;
	uint32_t pad;
	uint64_t offset;
	uint64_t length;
	uint64_t va; /* where the process maps the device memory's first byte */
};

_Static_assert(sizeof(struct wire_dm_caps) == 8, "wire_dm_caps");
_Static_assert(sizeof(struct wire_alloc_dm) == 24, "wire_alloc_dm");
_Static_assert(sizeof(struct wire_dm_resp) == 8, "wire_dm_resp");
_Static_assert(sizeof(struct wire_reg_dm_mr) == 40, "wire_reg_dm_mr");

#endif
