/*
 * The MR kinds beyond ibv_reg_mr: ibv_alloc_null_mr (inline in verbs.h, through the extended ops table) and
 * ibv_reg_dmabuf_mr (exported). The simulated device decides each one with its provider's and the kernel's rules:
 *
 *   ibv_alloc_null_mr  mlx5's alloc_null_mr (its dump-fill mkey): an lkey, no rkey, writes through it discarded and
 *                      reads zeros; every other rdma-core 44 provider has none and libibverbs answers EOPNOTSUPP.
 *   ibv_reg_dmabuf_mr  the provider's reg_dmabuf_mr (rdma-core 44: mlx5 and efa; the others none: EOPNOTSUPP, before
 *                      any argument is looked at), then the kernel's checks (access flags, the page offsets of offset
 *                      and iova), then the fd: dma_buf_get answers EBADF for an fd with no open file and EINVAL for a
 *                      file that is not a dma-buf. A real dma-buf's memory (a GPU's, udmabuf's) is outside the model:
 *                      refused with EOPNOTSUPP and a reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnicsim_verbs.h"
#include "wire_mr.h"

static size_t callsite(const char *verb, char *site, size_t cap)
{
	site[0] = 0;
	if (rnicsim_strict())
		rnicsim_callsite(verb, site, cap);
	return strlen(site);
}

/* mlx5_alloc_null_mr: addr NULL and length SIZE_MAX, as the provider fills them. */
static struct ibv_mr *alloc_null_mr(struct ibv_pd *pd)
{
	char site[CALLSITE_BYTES];
	size_t n = callsite("ibv_alloc_null_mr", site, sizeof(site));
	struct wire_handle req = {.handle = ((struct sim_pd *)pd)->handle};
	struct wire_mr_resp resp = {0};
	int e = rnicsim_rpc(OP_ALLOC_NULL_MR, &req, sizeof(req), site, n, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	return rnicsim_mr_new(pd, &resp, NULL, SIZE_MAX);
}

/* What is behind fd, as dma_buf_get would find it: no open file, a dma-buf (the kernel names its files
 * "anon_inode:dmabuf", or "/dmabuf:NAME" once dma-bufs have a file system of their own), or another file. */
static uint32_t fd_kind(int fd)
{
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return WIRE_DMABUF_FD_CLOSED;
	char path[64], target[256];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return WIRE_DMABUF_FD_OTHER;
	target[n] = 0;
	return strstr(target, "dmabuf") ? WIRE_DMABUF_FD_DMABUF : WIRE_DMABUF_FD_OTHER;
}

/* ibv_reg_dmabuf_mr(3): as libibverbs does after the provider, the MR's addr is the offset and its length the
 * length asked for. */
EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
					int access)
{
	char site[CALLSITE_BYTES];
	size_t n = callsite("ibv_reg_dmabuf_mr", site, sizeof(site));
	struct wire_reg_dmabuf_mr req = {.pd = ((struct sim_pd *)pd)->handle,
					 .access = (uint32_t)access,
					 .fd_kind = fd_kind(fd),
					 .fd = fd,
					 .offset = offset,
					 .length = length,
					 .iova = iova};
	struct wire_mr_resp resp = {0};
	int e = rnicsim_rpc(OP_REG_DMABUF_MR, &req, sizeof(req), site, n, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	return rnicsim_mr_new(pd, &resp, (void *)(uintptr_t)offset, length);
}

void rnicsim_set_mr_kind_ops(struct verbs_context *vctx)
{
	vctx->alloc_null_mr = alloc_null_mr;
}
