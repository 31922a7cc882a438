/*
 * The key mistakes users make, each on a fresh pair of connected RC QPs of one device (loopback): the errno or
 * work-completion status a real stack gives is checked here ("ok CASE: ..." or "FAIL CASE: ..."); what strict mode
 * says about each (the rule, the keys, the call sites, the fix) is checked by the Java test on the program's stderr.
 *
 *   madeup-lkey      a gather entry with a key no MR ever had, over a registered buffer   IBV_WC_LOC_PROT_ERR
 *   orphan-window    a READ through a type 2 window whose MR was deregistered (mlx5 lets the dereg go)
 *                                                                                         IBV_WC_REM_ACCESS_ERR
 *   invalidated-window  a WRITE through a type 2 window after a LOCAL_INV of it            IBV_WC_REM_ACCESS_ERR
 *   local-inv-mr     LOCAL_INV of an ordinary MR's key                                    IBV_WC_LOC_QP_OP_ERR
 *   unmapped-target  an RDMA WRITE into an MR whose memory the program unmapped            IBV_WC_SUCCESS (pinned)
 *
 * Build: gcc -g -rdynamic key_mistakes.c -libverbs (the C call sites of strict mode name functions with -rdynamic).
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

/* Posts one RDMA WRITE or READ from a and returns its completion status. */
static int rdma_status(struct pair p, enum ibv_wr_opcode op, uint64_t laddr, uint32_t len, uint32_t lkey,
		       uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = laddr, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op};
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	int e = post_signaled(p.a, &wr);
	return e ? -e : await_status(p.cq);
}

/* A type 2 window over [addr, addr + len) of mr, bound by a BIND_MW on b; its rkey, or 0. */
static uint32_t bind_type2(struct pair p, struct ibv_mw *mw, struct ibv_mr *mr, void *addr, size_t len)
{
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr bw = {.wr_id = 21, .opcode = IBV_WR_BIND_MW};
	bw.bind_mw.mw = mw;
	bw.bind_mw.rkey = rkey;
	bw.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = mr, .addr = (uintptr_t)addr, .length = len,
							  .mw_access_flags = IBV_ACCESS_REMOTE_READ |
									     IBV_ACCESS_REMOTE_WRITE};
	int e = post_signaled(p.b, &bw);
	return e == 0 && await_status(p.cq) == IBV_WC_SUCCESS ? rkey : 0;
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	size_t len = 4096;
	char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len);
	memset(src, 'x', len);
	memset(dst, 0, len);
	struct ibv_mr *ms = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	if (!ms) {
		perror("ibv_reg_mr");
		return 2;
	}

	struct pair p = pair_new(pd, NULL);
	expect_status("madeup-lkey", rdma_status(p, IBV_WR_RDMA_WRITE, (uintptr_t)src, 64, 0x00abcd00, 0, 0),
		      IBV_WC_LOC_PROT_ERR);
	pair_free(p);

	int bind_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_MW_BIND;
	p = pair_new(pd, NULL);
	struct ibv_mr *mb = ibv_reg_mr(pd, dst, len, bind_access);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint32_t rkey = mb && mw ? bind_type2(p, mw, mb, dst, len) : 0;
	check("orphan-window", rkey != 0, "the window was bound");
	check("orphan-window", ibv_dereg_mr(mb) == 0, "ibv_dereg_mr of the window's MR returned 0 (mlx5)");
	expect_status("orphan-window", rdma_status(p, IBV_WR_RDMA_READ, (uintptr_t)src, 64, ms->lkey, (uintptr_t)dst,
						   rkey),
		      IBV_WC_REM_ACCESS_ERR);
	pair_free(p);

	p = pair_new(pd, NULL);
	mb = ibv_reg_mr(pd, dst, len, bind_access);
	rkey = mb ? bind_type2(p, mw, mb, dst, len) : 0;
	struct ibv_send_wr inv = {.wr_id = 22, .opcode = IBV_WR_LOCAL_INV};
	inv.invalidate_rkey = rkey;
	expect_status("invalidated-window", post_signaled(p.b, &inv) ? -1 : await_status(p.cq), IBV_WC_SUCCESS);
	expect_status("invalidated-window", rdma_status(p, IBV_WR_RDMA_WRITE, (uintptr_t)src, 64, ms->lkey,
							(uintptr_t)dst, rkey),
		      IBV_WC_REM_ACCESS_ERR);
	pair_free(p);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(mb);

	p = pair_new(pd, NULL);
	struct ibv_send_wr mrinv = {.wr_id = 23, .opcode = IBV_WR_LOCAL_INV};
	mrinv.invalidate_rkey = ms->lkey;
	expect_status("local-inv-mr", post_signaled(p.a, &mrinv) ? -1 : await_status(p.cq), IBV_WC_LOC_QP_OP_ERR);
	pair_free(p);

	p = pair_new(pd, NULL);
	char *gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(gone, 0, 8192);
	struct ibv_mr *mu = ibv_reg_mr(pd, gone, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	munmap(gone, 8192);
	expect_status("unmapped-target", mu ? rdma_status(p, IBV_WR_RDMA_WRITE, (uintptr_t)src, 64, ms->lkey,
							  (uintptr_t)gone + 128, mu->rkey)
					    : -2,
		      IBV_WC_SUCCESS);
	pair_free(p);
	if (mu)
		ibv_dereg_mr(mu);

	ibv_dereg_mr(ms);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%s\n", failures ? "FAILED" : "all cases as a real stack answers");
	return failures ? 1 : 0;
}
