/*
 * Device memory (ibv_alloc_dm(3)): ibv_alloc_dm, ibv_free_dm and ibv_reg_dm_mr are inline in verbs.h and call the
 * extended ops table; ibv_memcpy_to_dm and ibv_memcpy_from_dm call the struct ibv_dm's own function pointers.
 *
 * The simulated device decides (max_dm_size, comp_mask, length, free space, EBUSY, the MR's access and range: the
 * model's SimDm and SimDmMr, with mlx5's and the kernel's rules). The bytes live in a shared anonymous mapping of
 * the process, as mlx5 maps the MEMIC BAR pages into it: the copies are plain loads and stores with mlx5's checks
 * (mlx5_access_dm: the range first, EFAULT; then offset and length in 4-byte words, EINVAL), and the fabric moves
 * the bytes of work requests on an MR of ibv_reg_dm_mr to and from that mapping.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rnicsim_verbs.h"
#include "wire_dm.h"

struct sim_dm {
	struct ibv_dm dm;
	uint32_t handle; /* the server's */
	uint32_t copy_granule;
	uint64_t length;
	char *va;
	size_t map_bytes;
	uint32_t ctx_handle; /* the server's context: a second context of the process sharing it may import the DM */
	struct sim_dm *next; /* the allocated DMs of the process, for ibv_import_dm */
};

static struct sim_dm *allocated;

static void dm_track(struct sim_dm *d)
{
	rnicsim_lock();
	d->next = allocated;
	allocated = d;
	rnicsim_unlock();
}

static void dm_untrack(struct sim_dm *d)
{
	rnicsim_lock();
	for (struct sim_dm **p = &allocated; *p; p = &(*p)->next) {
		if (*p == d) {
			*p = d->next;
			break;
		}
	}
	rnicsim_unlock();
}

/* mlx5_access_dm's order: a range past the allocation is EFAULT, then a misaligned offset or length EINVAL. */
static int check_copy(const struct sim_dm *d, uint64_t offset, size_t length)
{
	if (offset > d->length || length > d->length - offset)
		return EFAULT;
	if (d->copy_granule > 1 && ((offset % d->copy_granule) || (length % d->copy_granule)))
		return EINVAL;
	return 0;
}

static int memcpy_to_dm(struct ibv_dm *dm, uint64_t offset, const void *host, size_t length)
{
	struct sim_dm *d = (struct sim_dm *)dm;
	int e = check_copy(d, offset, length);
	if (e)
		return e;
	memcpy(d->va + offset, host, length);
	return 0;
}

static int memcpy_from_dm(void *host, struct ibv_dm *dm, uint64_t offset, size_t length)
{
	struct sim_dm *d = (struct sim_dm *)dm;
	int e = check_copy(d, offset, length);
	if (e)
		return e;
	memcpy(host, d->va + offset, length);
	return 0;
}

uint64_t rnicsim_max_dm_size(struct ibv_context *ctx)
{
	struct wire_handle req = {.handle = rnicsim_ctx_handle(ctx)};
	struct wire_dm_caps caps = {0};
	if (rnicsim_rpc(OP_DM_CAPS, &req, sizeof(req), NULL, 0, &caps, sizeof(caps), NULL))
		return 0;
	return caps.max_dm_size;
}

static struct ibv_dm *alloc_dm(struct ibv_context *ctx, struct ibv_alloc_dm_attr *attr)
{
	struct wire_alloc_dm req = {.ctx = rnicsim_ctx_handle(ctx),
				    .log_align_req = attr->log_align_req,
				    .comp_mask = attr->comp_mask,
				    .length = attr->length};
	struct wire_dm_resp resp = {0};
	int e = rnicsim_rpc(OP_ALLOC_DM, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_dm *d = calloc(1, sizeof(*d));
	size_t page = 4096;
	size_t map_bytes = (attr->length + page - 1) / page * page;
	void *va = d ? mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	if (va == MAP_FAILED) {
		struct wire_handle f = {.handle = resp.dm};
		rnicsim_rpc(OP_FREE_DM, &f, sizeof(f), NULL, 0, NULL, 0, NULL);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	d->handle = resp.dm;
	d->copy_granule = resp.copy_granule;
	d->length = attr->length;
	d->va = va;
	d->map_bytes = map_bytes;
	d->dm.context = ctx;
	d->dm.memcpy_to_dm = memcpy_to_dm;
	d->dm.memcpy_from_dm = memcpy_from_dm;
	d->dm.comp_mask = IBV_DM_MASK_HANDLE; /* as ibv_cmd_alloc_dm sets it, with the handle */
	d->dm.handle = resp.dm;
	d->ctx_handle = rnicsim_ctx_handle(ctx);
	dm_track(d);
	return &d->dm;
}

static int free_dm(struct ibv_dm *dm)
{
	struct sim_dm *d = (struct sim_dm *)dm;
	struct wire_handle req = {.handle = d->handle};
	int e = rnicsim_rpc(OP_FREE_DM, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e; /* EBUSY: an MR still uses it; it stays allocated and mapped */
	dm_untrack(d);
	munmap(d->va, d->map_bytes);
	free(d);
	return 0;
}

static struct ibv_mr *reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t offset, size_t length,
				unsigned int access)
{
	struct sim_dm *d = (struct sim_dm *)dm;
	char site[CALLSITE_BYTES];
	site[0] = 0;
	if (rnicsim_strict())
		rnicsim_callsite("ibv_reg_dm_mr", site, sizeof(site));
	struct wire_reg_dm_mr req = {.pd = ((struct sim_pd *)pd)->handle,
				     .dm = d->handle,
				     .access = access,
				     .offset = offset,
				     .length = length,
				     .va = (uint64_t)(uintptr_t)d->va};
	struct wire_mr_resp resp = {0};
	int e = rnicsim_rpc(OP_REG_DM_MR, &req, sizeof(req), site, strlen(site), &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	return rnicsim_mr_new(pd, &resp, NULL, length); /* zero-based: ibv_cmd_reg_dm_mr leaves addr NULL */
}

/*
 * ibv_import_dm(3): the DM of dm_handle on the server context that ctx shares (a context of ibv_import_device on a
 * dup of the first one's cmd_fd), seen through ctx. As mlx5_import_dm does, the view maps the same device memory
 * again (here: mremap of the shared mapping with old size 0, a second mapping of the same pages), so that the view's
 * copies see the first one's bytes and ibv_unimport_dm unmaps only the view. Nothing travels to the server: the DM
 * is the same object there. A handle that names no DM of that context is ENOENT, as the kernel's object lookup
 * (rdma_lookup_get_uobject) answers; a device without device memory (max_dm_size 0) has a provider without
 * import_dm, and libibverbs answers EOPNOTSUPP.
 */
EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *ctx, uint32_t dm_handle)
{
	if (!rnicsim_max_dm_size(ctx)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	uint32_t ctx_handle = rnicsim_ctx_handle(ctx);
	struct sim_dm *orig = NULL;
	rnicsim_lock();
	for (struct sim_dm *d = allocated; d && !orig; d = d->next)
		if (d->handle == dm_handle && d->ctx_handle == ctx_handle)
			orig = d;
	rnicsim_unlock();
	if (!orig) {
		errno = ENOENT;
		return NULL;
	}
	struct sim_dm *v = calloc(1, sizeof(*v));
	void *va = v ? mremap(orig->va, 0, orig->map_bytes, MREMAP_MAYMOVE) : MAP_FAILED;
	if (va == MAP_FAILED) {
		free(v);
		errno = ENOMEM;
		return NULL;
	}
	*v = *orig;
	v->next = NULL;
	v->va = va;
	v->dm.context = ctx;
	return &v->dm;
}

/* ibv_unimport_dm(3): forgets the view; the DM stays allocated for the context that allocated it. */
EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	struct sim_dm *v = (struct sim_dm *)dm;
	munmap(v->va, v->map_bytes);
	free(v);
}

void rnicsim_set_dm_ops(struct verbs_context *vctx)
{
	vctx->alloc_dm = alloc_dm;
	vctx->free_dm = free_dm;
	vctx->reg_dm_mr = reg_dm_mr;
}
