/*
 * The MR kinds beyond ibv_reg_mr on the first device, with what its provider and the kernel answer, checked. Prints
 * one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got the expected answer. The
 * argument says what the device's rdma-core 44 provider has: "null" (alloc_null_mr: mlx5), "dmabuf" (reg_dmabuf_mr:
 * mlx5, efa), both or neither ("-").
 *
 *   null-mr        ibv_alloc_null_mr                                  an lkey, addr NULL, length SIZE_MAX; or NULL,
 *                                                                     EOPNOTSUPP without alloc_null_mr
 *   null-mr-recv   a SEND received into an SGE of the null MR         IBV_WC_SUCCESS, byte_len; the memory at the
 *                                                                     SGE's address untouched
 *   null-mr-send   a SEND whose SGE is of the null MR                 the receiver gets zeros
 *   dmabuf-bad-fd  ibv_reg_dmabuf_mr with fd -1                       NULL, EBADF (dma_buf_get); EOPNOTSUPP without
 *                                                                     reg_dmabuf_mr
 *   dmabuf-not     with the fd of /dev/null                           NULL, EINVAL (not a dma-buf)
 *   dmabuf-access  REMOTE_WRITE without LOCAL_WRITE, fd -1            NULL, EINVAL: access is checked before the fd
 *
 * Build: gcc -g mr_kinds.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			return 0;
	}
}

/* One SEND from a to b: the receive's SGE and the send's; the receive's completion in *wc. */
static int send_one(struct pair *p, struct ibv_sge *recv_sge, struct ibv_sge *send_sge, struct ibv_wc *wc)
{
	struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = recv_sge, .num_sge = 1}, *rbad;
	struct ibv_send_wr sw = {.wr_id = 2, .sg_list = send_sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	if (ibv_post_recv(p->b, &rw, &rbad) || ibv_post_send(p->a, &sw, &sbad))
		return -1;
	struct ibv_wc w[2];
	if (!poll_one(p->cq, &w[0]) || !poll_one(p->cq, &w[1]))
		return -1;
	*wc = w[0].wr_id == 1 ? w[0] : w[1];
	return (w[0].status == IBV_WC_SUCCESS && w[1].status == IBV_WC_SUCCESS) ? 0 : -1;
}

static void null_mr_cases(void)
{
	errno = 0;
	struct ibv_mr *null = ibv_alloc_null_mr(pd);
	check("null-mr", null && null->lkey != 0 && null->addr == NULL && null->length == SIZE_MAX,
	      "ibv_alloc_null_mr: an lkey, addr NULL, length SIZE_MAX");
	if (!null)
		return;
	struct pair p = pair_new(pd, NULL);
	char *src = calloc(1, 4096), *dst = calloc(1, 4096);
	struct ibv_mr *smr = ibv_reg_mr(pd, src, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *dmr = ibv_reg_mr(pd, dst, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!smr || !dmr) {
		perror("the MRs");
		exit(2);
	}
	memset(src, 0x5a, 4096);
	memset(dst, 0xaa, 4096);
	/* the receive names dst's address under the null MR's lkey: the bytes go nowhere */
	struct ibv_sge into_null = {(uintptr_t)dst, 256, null->lkey}, from_src = {(uintptr_t)src, 256, smr->lkey};
	struct ibv_wc wc;
	int e = send_one(&p, &into_null, &from_src, &wc);
	int untouched = 1;
	for (int i = 0; i < 4096; i++)
		untouched &= dst[i] == (char)0xaa;
	check("null-mr-recv", !e && wc.byte_len == 256 && untouched,
	      "a SEND received into an SGE of the null MR: IBV_WC_SUCCESS, byte_len 256, the memory at the SGE's "
	      "address untouched");
	struct ibv_sge from_null = {(uintptr_t)src, 128, null->lkey}, into_dst = {(uintptr_t)dst, 128, dmr->lkey};
	e = send_one(&p, &into_dst, &from_null, &wc);
	int zeros = 1;
	for (int i = 0; i < 128; i++)
		zeros &= dst[i] == 0;
	check("null-mr-send", !e && wc.byte_len == 128 && zeros && dst[128] == (char)0xaa,
	      "a SEND whose SGE is of the null MR: the receiver gets 128 zeros");
	check("null-mr", ibv_dereg_mr(null) == 0, "ibv_dereg_mr of the null MR: 0");
	pair_free(p);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
}

static void dmabuf_cases(int has)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	errno = 0;
	struct ibv_mr *m = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, access);
	if (!has) {
		check("dmabuf-bad-fd", !m && errno == EOPNOTSUPP,
		      "a provider without reg_dmabuf_mr: NULL, EOPNOTSUPP before the fd is looked at");
		return;
	}
	check("dmabuf-bad-fd", !m && errno == EBADF, "fd -1: NULL, EBADF (dma_buf_get finds no file)");
	int fd = open("/dev/null", O_RDONLY);
	errno = 0;
	m = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, fd, access);
	check("dmabuf-not", !m && errno == EINVAL, "the fd of /dev/null: NULL, EINVAL (not a dma-buf)");
	close(fd);
	errno = 0;
	m = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, -1, IBV_ACCESS_REMOTE_WRITE);
	check("dmabuf-access", !m && errno == EINVAL,
	      "REMOTE_WRITE without LOCAL_WRITE and fd -1: NULL, EINVAL (access is checked before the fd)");
}

int main(int argc, char **argv)
{
	const char *has = argc > 1 ? argv[1] : "-";
	struct ibv_device **list = open_first_device(&ctx, &pd);
	if (strstr(has, "null")) {
		null_mr_cases();
	} else {
		errno = 0;
		struct ibv_mr *m = ibv_alloc_null_mr(pd);
		check("null-mr", !m && errno == EOPNOTSUPP, "a provider without alloc_null_mr: NULL, EOPNOTSUPP");
	}
	dmabuf_cases(strstr(has, "dmabuf") != NULL);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
