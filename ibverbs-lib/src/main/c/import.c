/* Sharing a context, a PD and an MR with a second context of the same process (ibv_import_device(3),
 * ibv_import_pd(3), ibv_import_mr(3)): rdma-core's tests/test_shared_pd.py dups a context's cmd_fd, imports the
 * device from it and the PD and MR by their handles, and runs traffic through them. An imported object is the same
 * object of the device seen through another context: it has the same handle on the fabric server, so nothing
 * travels to the server to import one, and ibv_unimport_pd and ibv_unimport_mr only free the second view. The
 * server's context goes when the last context that shares it is closed. A context's cmd_fd is a memfd of its own,
 * so a dup of it (a descriptor of the same file) names it. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

#define EXPORT __attribute__((visibility("default")))

struct node {
	void *obj;
	struct node *next;
};

static struct node *ctxs, *pds, *mrs;

static void track(struct node **list, void *obj)
{
	struct node *n = malloc(sizeof(*n));
	if (!n)
		return; /* not importable then, and nothing else changes */
	n->obj = obj;
	rnicsim_lock();
	n->next = *list;
	*list = n;
	rnicsim_unlock();
}

static void untrack(struct node **list, void *obj)
{
	rnicsim_lock();
	for (struct node **p = list; *p; p = &(*p)->next) {
		if ((*p)->obj == obj) {
			struct node *n = *p;
			*p = n->next;
			free(n);
			break;
		}
	}
	rnicsim_unlock();
}

int rnicsim_cmd_fd(void)
{
	return memfd_create("rnicsim-cmd", MFD_CLOEXEC);
}

void rnicsim_ctx_opened(struct sim_ctx *c)
{
	track(&ctxs, c);
}

int rnicsim_ctx_closing(struct sim_ctx *c)
{
	untrack(&ctxs, c);
	int shared = 0;
	rnicsim_lock();
	for (struct node *n = ctxs; n; n = n->next)
		shared |= ((struct sim_ctx *)n->obj)->handle == c->handle;
	rnicsim_unlock();
	return shared;
}

void rnicsim_pd_created(struct sim_pd *pd)
{
	track(&pds, pd);
}

void rnicsim_pd_gone(struct sim_pd *pd)
{
	untrack(&pds, pd);
}

void rnicsim_mr_created(struct sim_mr *mr)
{
	track(&mrs, mr);
}

void rnicsim_mr_gone(struct sim_mr *mr)
{
	untrack(&mrs, mr);
}

/* The registered object of list whose handle is handle, on the server context of ctx. */
static void *find(struct node *list, uint32_t handle, struct ibv_context *ctx, int mr)
{
	void *found = NULL;
	rnicsim_lock();
	for (struct node *n = list; n && !found; n = n->next) {
		uint32_t h = mr ? ((struct sim_mr *)n->obj)->handle : ((struct sim_pd *)n->obj)->handle;
		struct ibv_context *c = mr ? ((struct sim_mr *)n->obj)->mr.context : ((struct sim_pd *)n->obj)->pd.context;
		if (h == handle && rnicsim_ctx_handle(c) == rnicsim_ctx_handle(ctx))
			found = n->obj;
	}
	rnicsim_unlock();
	return found;
}

EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct stat st;
	if (fstat(cmd_fd, &st))
		return NULL; /* errno from fstat: EBADF */
	struct sim_ctx *orig = NULL;
	rnicsim_lock();
	for (struct node *n = ctxs; n && !orig; n = n->next) {
		struct stat o;
		struct sim_ctx *c = n->obj;
		if (!fstat(c->vctx.context.cmd_fd, &o) && o.st_dev == st.st_dev && o.st_ino == st.st_ino)
			orig = c;
	}
	rnicsim_unlock();
	if (!orig) {
		errno = EINVAL; /* as libibverbs answers a descriptor that is not a verbs device's */
		return NULL;
	}
	struct sim_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->handle = orig->handle;
	c->device_index = orig->device_index;
	struct ibv_context *ctx = &c->vctx.context;
	ctx->device = orig->vctx.context.device;
	ctx->cmd_fd = cmd_fd; /* the imported context owns it: ibv_close_device closes it */
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);
	ctx->num_comp_vectors = orig->vctx.context.num_comp_vectors;
	pthread_mutex_init(&ctx->mutex, NULL);
	rnicsim_set_ops(&c->vctx);
	rnicsim_ctx_opened(c);
	return ctx;
}

EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *ctx, uint32_t pd_handle)
{
	struct sim_pd *orig = find(pds, pd_handle, ctx, 0);
	if (!orig) {
		errno = EINVAL; /* no PD with that handle on the context's device context */
		return NULL;
	}
	struct sim_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->pd.context = ctx;
	pd->pd.handle = pd_handle;
	pd->handle = pd_handle;
	return &pd->pd;
}

EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	free((struct sim_pd *)pd);
}

EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct sim_mr *orig = find(mrs, mr_handle, pd->context, 1);
	if (!orig) {
		errno = EINVAL; /* no MR with that handle on the PD's device context */
		return NULL;
	}
	struct sim_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->handle = mr_handle;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = NULL; /* the kernel's answer carries no address (ibv_import_mr(3)) */
	mr->mr.length = orig->mr.length;
	mr->mr.handle = mr_handle;
	mr->mr.lkey = orig->mr.lkey;
	mr->mr.rkey = orig->mr.rkey;
	return &mr->mr;
}

EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	free((struct sim_mr *)mr);
}
