/*
 * Device memory (ibv_alloc_dm(3)) on the first device, with what mlx5 and the kernel answer, checked. Prints one line
 * per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got the expected answer.
 *
 *   caps        ibv_query_device_ex's max_dm_size                              above 0 (mlx5), or 0 (rxe: then
 *               ibv_alloc_dm is NULL with EOPNOTSUPP and nothing else runs)
 *   alloc-bad   comp_mask 1; a length above max_dm_size; a length of 0          NULL, EINVAL each (mlx5_alloc_dm)
 *   copy        ibv_memcpy_to_dm then ibv_memcpy_from_dm                        0, the same bytes back
 *   copy-bad    an offset or a length not a multiple of 4; a range past the end   EINVAL; EFAULT (mlx5_access_dm)
 *   reg-bad     ibv_reg_dm_mr without ZERO_BASED; with MW_BIND; past the end     NULL, EINVAL each
 *   write       an RDMA WRITE into a DM MR (remote address: an offset)          IBV_WC_SUCCESS; the bytes in the DM
 *   read        an RDMA READ from a DM MR into host memory                      IBV_WC_SUCCESS; the DM's bytes
 *   send        a SEND gathered from a DM MR, received into another DM MR       IBV_WC_SUCCESS; the bytes arrive
 *   free-busy   ibv_free_dm while an MR uses it                                 EBUSY; 0 once the MR is gone
 *   exhaust     all of max_dm_size, then 4 bytes more                           the first; NULL, ENOMEM
 *   fork        a child of fork() allocates and frees on its parent's context   0 and 0
 *   import      ibv_import_dm on a context imported from a dup of cmd_fd:        the same bytes through both;
 *               a handle of no DM; ibv_unimport_dm                              ENOENT; the DM stays readable
 *               (rxe: ibv_import_dm                                             NULL, EOPNOTSUPP)
 *
 * Build: gcc -g device_memory.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static struct ibv_dm *alloc(size_t length, uint32_t comp_mask)
{
	struct ibv_alloc_dm_attr a = {.length = length, .log_align_req = 0, .comp_mask = comp_mask};
	return ibv_alloc_dm(ctx, &a);
}

static void pattern(char *b, size_t n, int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(seed * 31 + i);
}

static void bad_calls(struct ibv_dm *dm, uint64_t max)
{
	errno = 0;
	check("alloc-bad", !alloc(4096, 1) && errno == EINVAL, "comp_mask 1: NULL, EINVAL");
	errno = 0;
	check("alloc-bad", !alloc(max + 1, 0) && errno == EINVAL, "a length above max_dm_size: NULL, EINVAL");
	errno = 0;
	check("alloc-bad", !alloc(0, 0) && errno == EINVAL, "a length of 0: NULL, EINVAL");
	char buf[16] = {0};
	check("copy-bad", ibv_memcpy_to_dm(dm, 3, buf, 4) == EINVAL, "offset 3: EINVAL");
	check("copy-bad", ibv_memcpy_from_dm(buf, dm, 4, 6) == EINVAL, "length 6: EINVAL");
	check("copy-bad", ibv_memcpy_to_dm(dm, 4096 - 8, buf, 16) == EFAULT, "a range past the end: EFAULT");
	errno = 0;
	check("reg-bad", !ibv_reg_dm_mr(pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
	      "without IBV_ACCESS_ZERO_BASED: NULL, EINVAL");
	errno = 0;
	check("reg-bad", !ibv_reg_dm_mr(pd, dm, 0, 64, IBV_ACCESS_ZERO_BASED | IBV_ACCESS_MW_BIND) && errno == EINVAL,
	      "with IBV_ACCESS_MW_BIND: NULL, EINVAL");
	errno = 0;
	check("reg-bad", !ibv_reg_dm_mr(pd, dm, 4000, 200, IBV_ACCESS_ZERO_BASED) && errno == EINVAL,
	      "a range past the end: NULL, EINVAL");
}

static void traffic(struct ibv_dm *dm)
{
	unsigned all = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *dmr = ibv_reg_dm_mr(pd, dm, 0, 4096, all);
	static char host[4096], back[4096], want[512];
	struct ibv_mr *hmr = ibv_reg_mr(pd, host, sizeof(host), IBV_ACCESS_LOCAL_WRITE);
	if (!dmr || !hmr) {
		perror("ibv_reg_dm_mr or ibv_reg_mr");
		exit(2);
	}
	check("reg", dmr->addr == NULL && dmr->length == 4096 && dmr->lkey != 0, "a zero-based MR: addr NULL");
	struct pair p = pair_new(pd, NULL);

	/* write: 256 host bytes into the DM at offset 128, the remote address being the offset */
	pattern(host, 256, 1);
	struct ibv_sge s = {.addr = (uintptr_t)host, .length = 256, .lkey = hmr->lkey};
	struct ibv_send_wr w = {.wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE};
	w.wr.rdma.remote_addr = 128;
	w.wr.rdma.rkey = dmr->rkey;
	int st = post_signaled(p.a, &w) ? -1 : await_status(p.cq);
	memset(back, 0, sizeof(back));
	ibv_memcpy_from_dm(back, dm, 128, 256);
	check("write", st == IBV_WC_SUCCESS && memcmp(back, host, 256) == 0,
	      "IBV_WC_SUCCESS, and ibv_memcpy_from_dm reads the 256 bytes at offset 128");

	/* read: bytes put with ibv_memcpy_to_dm, read by an RDMA READ into host memory */
	pattern(want, 512, 2);
	ibv_memcpy_to_dm(dm, 1024, want, 512);
	memset(host, 0, 512);
	s.length = 512;
	struct ibv_send_wr r = {.wr_id = 2, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_READ};
	r.wr.rdma.remote_addr = 1024;
	r.wr.rdma.rkey = dmr->rkey;
	st = post_signaled(p.a, &r) ? -1 : await_status(p.cq);
	check("read", st == IBV_WC_SUCCESS && memcmp(host, want, 512) == 0, "IBV_WC_SUCCESS, the DM's 512 bytes");

	/* send: gathered from the DM MR at offset 1024, received into the same DM MR at offset 3072 */
	struct ibv_sge rs = {.addr = 3072, .length = 512, .lkey = dmr->lkey};
	struct ibv_recv_wr rw = {.wr_id = 3, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = 1024, .length = 512, .lkey = dmr->lkey};
	struct ibv_send_wr sw = {.wr_id = 4, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND};
	int st1 = -1, st2 = -1;
	if (!ibv_post_recv(p.b, &rw, &rbad) && !post_signaled(p.a, &sw)) {
		st1 = await_status(p.cq);
		st2 = await_status(p.cq);
	}
	memset(back, 0, 512);
	ibv_memcpy_from_dm(back, dm, 3072, 512);
	check("send", st1 == IBV_WC_SUCCESS && st2 == IBV_WC_SUCCESS && memcmp(back, want, 512) == 0,
	      "IBV_WC_SUCCESS twice; the bytes are at offset 3072 of the device memory");

	/* free-busy */
	check("free-busy", ibv_free_dm(dm) == EBUSY, "ibv_free_dm with an MR over it: EBUSY");
	char first[16];
	pattern(first, 16, 1);
	memset(back, 0, 16);
	check("free-busy", ibv_memcpy_from_dm(back, dm, 128, 16) == 0 && memcmp(back, first, 16) == 0,
	      "the device memory is still allocated and readable");
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq);
	ibv_dereg_mr(hmr);
	check("free-busy", ibv_dereg_mr(dmr) == 0 && ibv_free_dm(dm) == 0, "ibv_dereg_mr, then ibv_free_dm: 0");
}

/* A second context of the process, imported from a dup of the first one's cmd_fd, sees the DM by its handle. */
static void import_dm(void)
{
	struct ibv_dm *dm = alloc(4096, 0);
	struct ibv_context *second = ibv_import_device(dup(ctx->cmd_fd));
	if (!second) {
		check("import", 0, "ibv_import_device on a dup of cmd_fd");
		return;
	}
	struct ibv_dm *view = ibv_import_dm(second, dm->handle);
	char in[128], out[128];
	pattern(in, 128, 9);
	memset(out, 0, 128);
	check("import", view && ibv_memcpy_to_dm(dm, 256, in, 128) == 0 &&
				ibv_memcpy_from_dm(out, view, 256, 128) == 0 && memcmp(in, out, 128) == 0,
	      "128 bytes written through the DM read back through its imported view");
	errno = 0;
	check("import", !ibv_import_dm(second, dm->handle + 1000) && errno == ENOENT,
	      "a handle of no DM: NULL, ENOENT");
	if (view)
		ibv_unimport_dm(view);
	memset(out, 0, 128);
	check("import", ibv_memcpy_from_dm(out, dm, 256, 128) == 0 && memcmp(in, out, 128) == 0,
	      "after ibv_unimport_dm the DM is still allocated and readable");
	ibv_close_device(second);
	ibv_free_dm(dm);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	struct ibv_device_attr_ex ax;
	if (ibv_query_device_ex(ctx, NULL, &ax)) {
		perror("ibv_query_device_ex");
		return 2;
	}
	uint64_t max = ax.max_dm_size;
	printf("max_dm_size %llu\n", (unsigned long long)max);
	if (max == 0) {
		errno = 0;
		check("caps", !alloc(4096, 0) && errno == EOPNOTSUPP, "no device memory: ibv_alloc_dm NULL, EOPNOTSUPP");
		errno = 0;
		check("import", !ibv_import_dm(ctx, 0) && errno == EOPNOTSUPP,
		      "no device memory: ibv_import_dm NULL, EOPNOTSUPP");
		return failures ? 1 : 0;
	}
	check("caps", 1, "max_dm_size above 0");
	struct ibv_dm *dm = alloc(4096, 0);
	if (!dm) {
		perror("ibv_alloc_dm");
		return 2;
	}
	char in[64], out[64];
	pattern(in, 64, 3);
	memset(out, 0, 64);
	check("copy", ibv_memcpy_to_dm(dm, 8, in, 64) == 0 && ibv_memcpy_from_dm(out, dm, 8, 64) == 0 &&
			      memcmp(in, out, 64) == 0, "64 bytes to offset 8 and back");
	bad_calls(dm, max);
	traffic(dm);
	import_dm();

	struct ibv_dm *all = alloc(max, 0);
	errno = 0;
	struct ibv_dm *more = alloc(4, 0);
	check("exhaust", all && !more && errno == ENOMEM, "all of max_dm_size; then 4 bytes more: NULL, ENOMEM");
	if (all)
		ibv_free_dm(all);

	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		struct ibv_dm *c = alloc(4096, 0);
		_exit(c && ibv_free_dm(c) == 0 ? 0 : 1);
	}
	int status = -1;
	waitpid(child, &status, 0);
	check("fork", WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child allocated and freed device memory on its parent's context");

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
