/*
 * Thread domains and parent domains (ibv_alloc_td(3), ibv_alloc_parent_domain(3)), where the device's provider has
 * them (mlx5; rxe's ops table has none, so libibverbs answers EOPNOTSUPP: extended.c fills the table per device).
 * They live in the library, as in the provider (rdma-core providers/mlx5/verbs.c):
 *   - ibv_alloc_td: a comp_mask is EINVAL (mlx5_alloc_td); ibv_dealloc_td of a TD a parent domain still uses is
 *     EBUSY (mlx5_dealloc_td's refcount);
 *   - ibv_alloc_parent_domain: no protection domain is EINVAL (libibverbs ibv_check_alloc_parent_domain); comp_mask
 *     bits other than ALLOCATORS and PD_CONTEXT are EINVAL (mlx5_alloc_parent_domain). The parent domain stands for
 *     its protection domain (its handle is the PD's, ibv_initialize_parent_domain): MRs, QPs, SRQs, AHs and
 *     extended CQs (IBV_CQ_INIT_ATTR_MASK_PD) are created with it;
 *   - ibv_dealloc_pd of a parent domain that QPs, SRQs or CQs still use, and of a PD under a live parent domain, is
 *     EBUSY (mlx5_free_pd and mlx5_dealloc_parent_domain: the refcounts);
 *   - the allocator: a QP, SRQ or CQ created in a parent domain with IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS asks
 *     its alloc() for the buffers the provider would allocate (the work queue, SRQ or CQE ring, page aligned, of the
 *     size mlx5 computes from the requested capacities; then a doorbell record of 8 bytes), with the resource types
 *     of mlx5dv.h (MLX5DV_RES_TYPE_QP, _SRQ, _CQ, _DBR) and the parent domain's pd_context, and gives each back to
 *     its free() when the object is destroyed. alloc() returning IBV_ALLOCATOR_USE_DEFAULT leaves the buffer to the
 *     provider (free() is not called for it); NULL fails the creation with ENOMEM and nothing is created.
 * The simulated device keeps its queues in the model: the buffers are the program's and stay untouched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

#define RES_TYPE(n) ((uint64_t)RDMA_DRIVER_MLX5 << 32 | (n)) /* mlx5dv.h MLX5DV_RES_TYPE_* */
#define RES_TYPE_QP RES_TYPE(1)
#define RES_TYPE_DBR RES_TYPE(3)
#define RES_TYPE_SRQ RES_TYPE(4)
#define SEND_WQE_BB 64 /* mlx5 MLX5_SEND_WQE_BB: a send WQE's basic block */
#define DATA_SEG 16    /* struct mlx5_wqe_data_seg: one SGE of a receive WQE */
#define DBR_BYTES 8    /* a doorbell record: two 32-bit counters */

struct sim_td {
	struct ibv_td td;
	int users; /* parent domains using it */
};

struct sim_parent_domain {
	struct sim_pd base; /* begins as a PD: its handle is the protection domain's */
	struct ibv_pd *protection;
	struct sim_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
	int users; /* QPs, SRQs and CQs created in it */
	struct sim_parent_domain *next;
};

/* The buffers an object of a parent domain took from its allocator. */
struct pd_bufs {
	struct sim_parent_domain *pd;
	void *obj;
	void *ptr[2];
	uint64_t type[2];
	struct pd_bufs *next;
};

static struct sim_parent_domain *domains; /* guarded by rnicsim_lock */
static struct pd_bufs *bound;

static struct sim_parent_domain *find(struct ibv_pd *pd)
{
	for (struct sim_parent_domain *d = domains; d; d = d->next)
		if (&d->base.pd == pd)
			return d;
	return NULL;
}

int rnicsim_is_parent_domain(struct ibv_pd *pd)
{
	rnicsim_lock();
	int yes = pd && find(pd) != NULL;
	rnicsim_unlock();
	return yes;
}

static struct ibv_td *alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{
	if (attr->comp_mask) {
		errno = EINVAL; /* mlx5_alloc_td: no comp_mask bit is defined */
		return NULL;
	}
	struct sim_td *t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->td.context = ctx;
	return &t->td;
}

static int dealloc_td(struct ibv_td *td)
{
	struct sim_td *t = (struct sim_td *)td;
	rnicsim_lock();
	int busy = t->users > 0;
	rnicsim_unlock();
	if (busy)
		return EBUSY; /* mlx5_dealloc_td: a parent domain still holds it */
	free(t);
	return 0;
}

static struct ibv_pd *alloc_parent_domain(struct ibv_context *ctx, struct ibv_parent_domain_init_attr *attr)
{
	if (!attr->pd || rnicsim_is_parent_domain(attr->pd)) {
		errno = EINVAL; /* a protection domain must be given (ibv_check_alloc_parent_domain) */
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) {
		errno = EINVAL; /* mlx5_alloc_parent_domain's check_comp_mask */
		return NULL;
	}
	struct sim_parent_domain *d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->protection = attr->pd;
	d->base.handle = ((struct sim_pd *)attr->pd)->handle;
	d->base.pd.context = ctx;
	d->base.pd.handle = attr->pd->handle;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		d->alloc = attr->alloc;
		d->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		d->pd_context = attr->pd_context;
	rnicsim_lock();
	d->td = (struct sim_td *)attr->td;
	if (d->td)
		d->td->users++;
	d->next = domains;
	domains = d;
	rnicsim_unlock();
	return &d->base.pd;
}

int rnicsim_pd_dealloc(struct ibv_pd *pd, int *handled)
{
	rnicsim_lock();
	struct sim_parent_domain *d = find(pd);
	int e = 0;
	*handled = 1;
	if (d && d->users > 0) {
		e = EBUSY; /* mlx5_dealloc_parent_domain: QPs, SRQs or CQs still use it */
	} else if (d) {
		for (struct sim_parent_domain **p = &domains; *p; p = &(*p)->next)
			if (*p == d) {
				*p = d->next;
				break;
			}
		if (d->td)
			d->td->users--;
		free(d);
	} else {
		*handled = 0;
		for (struct sim_parent_domain *x = domains; x; x = x->next)
			if (x->protection == pd) {
				e = EBUSY; /* mlx5_free_pd: a parent domain holds the PD */
				*handled = 1;
			}
	}
	rnicsim_unlock();
	return e;
}

/* Gives an object's buffers back to the parent domain's free() (not those the provider kept for itself). */
static void give_back(struct pd_bufs *b, int counted)
{
	for (int i = 0; i < 2; i++)
		if (b->ptr[i])
			b->pd->free(&b->pd->base.pd, b->pd->pd_context, b->ptr[i], b->type[i]);
	if (counted) {
		rnicsim_lock();
		b->pd->users--;
		rnicsim_unlock();
	}
	free(b);
}

void *rnicsim_pd_bufs_get(struct ibv_pd *pd, uint64_t type, size_t size, int *err)
{
	*err = 0;
	rnicsim_lock();
	struct sim_parent_domain *d = pd ? find(pd) : NULL;
	rnicsim_unlock();
	if (!d)
		return NULL;
	struct pd_bufs *b = calloc(1, sizeof(*b));
	if (!b) {
		*err = ENOMEM;
		return NULL;
	}
	b->pd = d;
	b->type[0] = type;
	b->type[1] = RES_TYPE_DBR;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t sizes[2] = {(size + page - 1) & ~(page - 1), DBR_BYTES};
	size_t aligns[2] = {page, DBR_BYTES};
	for (int i = 0; i < 2 && d->alloc && d->free; i++) {
		void *p = d->alloc(pd, d->pd_context, sizes[i], aligns[i], b->type[i]);
		if (!p) {
			give_back(b, 0);
			*err = ENOMEM; /* the allocator gave nothing: the provider's creation fails */
			return NULL;
		}
		b->ptr[i] = p == IBV_ALLOCATOR_USE_DEFAULT ? NULL : p; /* the provider's own buffer: not the user's to free */
	}
	rnicsim_lock();
	d->users++;
	rnicsim_unlock();
	return b;
}

void rnicsim_pd_bufs_put(void *bufs)
{
	if (bufs)
		give_back(bufs, 1);
}

void rnicsim_pd_bufs_bind(void *bufs, void *obj)
{
	struct pd_bufs *b = bufs;
	if (!b)
		return;
	if (!obj) {
		give_back(b, 1);
		return;
	}
	b->obj = obj;
	rnicsim_lock();
	b->next = bound;
	bound = b;
	rnicsim_unlock();
}

void rnicsim_pd_bufs_release(void *obj)
{
	rnicsim_lock();
	struct pd_bufs *b = NULL;
	for (struct pd_bufs **p = &bound; *p; p = &(*p)->next)
		if ((*p)->obj == obj) {
			b = *p;
			*p = b->next;
			break;
		}
	rnicsim_unlock();
	if (b)
		give_back(b, 1);
}

void *rnicsim_pd_qp_bufs(struct ibv_pd *pd, const struct ibv_qp_init_attr_ex *attr, int *err)
{
	/* mlx5 sizes the send queue in basic blocks and the receive queue in data segments, each count rounded up to
	 * a power of two; a QP on an SRQ has no receive queue of its own */
	size_t sq = 1, rq = 0, rq_stride = DATA_SEG;
	while (sq < attr->cap.max_send_wr)
		sq <<= 1;
	if (!attr->srq && attr->cap.max_recv_wr) {
		rq = 1;
		while (rq < attr->cap.max_recv_wr)
			rq <<= 1;
		while (rq_stride < (size_t)DATA_SEG * (attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1))
			rq_stride <<= 1;
	}
	return rnicsim_pd_bufs_get(pd, RES_TYPE_QP, sq * SEND_WQE_BB + rq * rq_stride, err);
}

void *rnicsim_pd_srq_bufs(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge, int *err)
{
	/* an SRQ WQE: the next-segment header and one data segment per SGE, rounded up to a power of two */
	size_t n = 1, stride = DATA_SEG;
	while (n < (size_t)max_wr + 1)
		n <<= 1;
	while (stride < (size_t)DATA_SEG * (1 + max_sge))
		stride <<= 1;
	return rnicsim_pd_bufs_get(pd, RES_TYPE_SRQ, n * stride, err);
}

void rnicsim_set_domain_ops(struct verbs_context *vctx)
{
	vctx->alloc_td = alloc_td;
	vctx->dealloc_td = dealloc_td;
	vctx->alloc_parent_domain = alloc_parent_domain;
}
