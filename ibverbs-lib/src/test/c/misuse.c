/*
 * Misuse of memory registration, each case on a fresh pair of connected RC QPs of one device (loopback): what a
 * real stack answers, checked. Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when
 * every case got the expected errno or work-completion status.
 *
 *   stale-rkey      RDMA WRITE with the rkey of an MR deregistered since   IBV_WC_REM_ACCESS_ERR
 *   freed-mr-lkey   a gather entry with the lkey of a freed MR             IBV_WC_LOC_PROT_ERR
 *   unregistered    a gather entry outside every registered range          IBV_WC_LOC_PROT_ERR
 *   wrong-lkey      a gather entry with a key nobody was given             IBV_WC_LOC_PROT_ERR
 *   unmapped        ibv_reg_mr of memory unmapped before                   EFAULT
 *   access-rule     REMOTE_WRITE without LOCAL_WRITE                       EINVAL
 *   write           a correct RDMA WRITE                                   IBV_WC_SUCCESS, the bytes arrive
 *
 * Build: gcc -g -rdynamic misuse.c -libverbs (the C call sites of strict mode name functions with -rdynamic).
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

/* Posts one RDMA WRITE from a to b and returns its completion status. */
static int write_status(struct pair p, uint64_t laddr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = laddr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED};
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	struct ibv_send_wr *bad;
	int e = ibv_post_send(p.a, &wr, &bad);
	if (e)
		return -e;
	struct ibv_wc wc;
	int n;
	while ((n = ibv_poll_cq(p.cq, 1, &wc)) == 0)
		;
	return n < 0 ? -1000 : (int)wc.status;
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	size_t len = 4096;
	char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len);
	memset(src, 'x', len);
	memset(dst, 0, len);
	struct ibv_mr *ms = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *md = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!ms || !md) {
		perror("ibv_reg_mr");
		return 2;
	}

	struct pair p = pair_new(pd, NULL);
	int st = write_status(p, (uintptr_t)src, 64, ms->lkey, (uintptr_t)dst, md->rkey);
	expect_status("write", st, IBV_WC_SUCCESS);
	check("write", memcmp(dst, src, 64) == 0 && dst[64] == 0, "the 64 bytes arrived, and no more");
	pair_free(p);

	uint32_t old_rkey = md->rkey;
	ibv_dereg_mr(md);
	memset(dst, 0, len);
	p = pair_new(pd, NULL);
	expect_status("stale-rkey", write_status(p, (uintptr_t)src, 64, ms->lkey, (uintptr_t)dst, old_rkey),
		      IBV_WC_REM_ACCESS_ERR);
	check("stale-rkey", dst[0] == 0, "the target bytes are unchanged");
	pair_free(p);

	char *other = aligned_alloc(4096, len);
	struct ibv_mr *mo = ibv_reg_mr(pd, other, len, IBV_ACCESS_LOCAL_WRITE);
	uint32_t freed_lkey = mo->lkey;
	ibv_dereg_mr(mo);
	md = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	p = pair_new(pd, NULL);
	expect_status("freed-mr-lkey", write_status(p, (uintptr_t)other, 64, freed_lkey, (uintptr_t)dst, md->rkey),
		      IBV_WC_LOC_PROT_ERR);
	pair_free(p);

	p = pair_new(pd, NULL);
	expect_status("unregistered", write_status(p, (uintptr_t)other, 64, ms->lkey, (uintptr_t)dst, md->rkey),
		      IBV_WC_LOC_PROT_ERR);
	pair_free(p);

	p = pair_new(pd, NULL);
	expect_status("wrong-lkey", write_status(p, (uintptr_t)src, 64, 0x00abcd00, (uintptr_t)dst, md->rkey),
		      IBV_WC_LOC_PROT_ERR);
	pair_free(p);

	void *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 8192);
	errno = 0;
	struct ibv_mr *mu = ibv_reg_mr(pd, gone, 8192, IBV_ACCESS_LOCAL_WRITE);
	check("unmapped", mu == NULL && errno == EFAULT, mu ? "registered memory that is not mapped"
							      : errno == EFAULT ? "EFAULT" : strerror(errno));

	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(pd, src, len, IBV_ACCESS_REMOTE_WRITE);
	check("access-rule", mr == NULL && errno == EINVAL, mr ? "registered REMOTE_WRITE without LOCAL_WRITE"
							       : errno == EINVAL ? "EINVAL" : strerror(errno));

	ibv_dereg_mr(md);
	ibv_dereg_mr(ms);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%s\n", failures ? "FAILED" : "all cases as a real stack answers");
	return failures ? 1 : 0;
}
