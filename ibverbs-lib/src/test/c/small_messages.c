/*
 * Small SENDs and RDMA WRITEs (512 bytes or less travel with their doorbell, the library's carry.c; longer ones are
 * moved by the fabric server) on a pair of connected RC QPs of one device (loopback). Prints one line per case ("ok
 * CASE: ..." or "FAIL CASE: ...") and exits 0 when every case held.
 *
 *   send-sges       a 100-byte SEND from 2 SGEs into a receive of 2 SGEs   the bytes split as the SGEs say
 *   send-512        a 512-byte SEND (carried)                              the bytes arrive, byte_len 512
 *   send-513        a 513-byte SEND (moved by the server)                  the bytes arrive, byte_len 513
 *   write-small     a 64-byte RDMA WRITE                                   the bytes arrive, and no more
 *   send-iova       a SEND from an MR registered at another iova           the MR's bytes arrive, not the iova's
 *   send-refused    a small SEND with a made-up lkey                       IBV_WC_LOC_PROT_ERR, the receive untouched
 *   send-unmapped   a small SEND from a registered buffer unmapped since   no crash: completions arrive
 *   recv-unmapped   a small SEND into a receive buffer unmapped since      no crash: the receive completes
 *
 * Build: gcc -g -rdynamic small_messages.c -libverbs
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
static struct pair p;

static int poll_one(struct ibv_wc *wc)
{
	int n;
	while ((n = ibv_poll_cq(p.cq, 1, wc)) == 0)
		;
	return n;
}

static void post_recv(struct ibv_sge *sges, int n)
{
	struct ibv_recv_wr wr = {.wr_id = 2, .sg_list = sges, .num_sge = n}, *bad;
	if (ibv_post_recv(p.b, &wr, &bad)) {
		perror("ibv_post_recv");
		exit(2);
	}
}

/* Posts a SEND from a to b of the given SGEs; answers the receive's completion (and takes the send's). */
static struct ibv_wc send_to_b(struct ibv_sge *sges, int n, struct ibv_wc *send_wc)
{
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = sges, .num_sge = n, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	struct ibv_wc got[2], recv = {.status = -1};
	memset(send_wc, 0, sizeof(*send_wc));
	send_wc->status = -1;
	if (ibv_post_send(p.a, &wr, &bad)) {
		perror("ibv_post_send");
		exit(2);
	}
	for (int i = 0; i < 2; i++) {
		if (poll_one(&got[i]) < 0)
			exit(2);
		if (got[i].wr_id == 2)
			recv = got[i];
		else
			*send_wc = got[i];
	}
	return recv;
}

static void fill(char *b, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (char)(seed + i * 7);
}

static struct ibv_mr *reg(void *addr, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		perror("ibv_reg_mr");
		exit(2);
	}
	return mr;
}

static void sized_send(const char *name, char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md, uint32_t len)
{
	fill(src, len, len);
	memset(dst, 0, 1024);
	struct ibv_sge r = {.addr = (uintptr_t)dst, .length = 1024, .lkey = md->lkey};
	struct ibv_sge s = {.addr = (uintptr_t)src, .length = len, .lkey = ms->lkey};
	post_recv(&r, 1);
	struct ibv_wc swc, wc = send_to_b(&s, 1, &swc);
	char what[160];
	snprintf(what, sizeof(what), "status %s, byte_len %u, bytes %s", ibv_wc_status_str(wc.status), wc.byte_len,
		 memcmp(dst, src, len) == 0 && dst[len] == 0 ? "as sent" : "wrong");
	check(name, wc.status == IBV_WC_SUCCESS && wc.byte_len == len && memcmp(dst, src, len) == 0 && dst[len] == 0,
	      what);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	p.cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = p.cq, .recv_cq = p.cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2, .max_recv_sge = 2}};
	p.a = ibv_create_qp(pd, &ia);
	p.b = ibv_create_qp(pd, &ia);
	if (!p.cq || !p.a || !p.b || connect_qp(p.a, p.b->qp_num) || connect_qp(p.b, p.a->qp_num)) {
		perror("setting up a QP pair");
		return 2;
	}
	char *src = aligned_alloc(4096, 4096), *dst = aligned_alloc(4096, 4096);
	memset(dst, 0, 4096);
	struct ibv_mr *ms = reg(src, 4096), *md = reg(dst, 4096);
	struct ibv_wc swc, wc;

	/* send-sges: 60 + 40 bytes gathered, scattered as 30 + 70 */
	fill(src, 4096, 1);
	struct ibv_sge s2[2] = {{(uintptr_t)src, 60, ms->lkey}, {(uintptr_t)(src + 1000), 40, ms->lkey}};
	struct ibv_sge r2[2] = {{(uintptr_t)dst, 30, md->lkey}, {(uintptr_t)(dst + 2000), 70, md->lkey}};
	post_recv(r2, 2);
	wc = send_to_b(s2, 2, &swc);
	char want[100];
	memcpy(want, src, 60);
	memcpy(want + 60, src + 1000, 40);
	check("send-sges", wc.status == IBV_WC_SUCCESS && wc.byte_len == 100 && memcmp(dst, want, 30) == 0 &&
				   memcmp(dst + 2000, want + 30, 70) == 0 && dst[30] == 0 && dst[2070] == 0,
	      "the 100 bytes split 30 + 70 over the receive's SGEs");

	sized_send("send-512", src, ms, dst, md, 512);
	sized_send("send-513", src, ms, dst, md, 513);

	/* write-small */
	memset(dst, 0, 4096);
	fill(src, 64, 9);
	struct ibv_sge ws = {.addr = (uintptr_t)src, .length = 64, .lkey = ms->lkey};
	struct ibv_send_wr w = {.wr_id = 1, .sg_list = &ws, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED}, *bad;
	w.wr.rdma.remote_addr = (uintptr_t)dst;
	w.wr.rdma.rkey = md->rkey;
	if (ibv_post_send(p.a, &w, &bad) || poll_one(&wc) < 0)
		return 2;
	check("write-small", wc.status == IBV_WC_SUCCESS && memcmp(dst, src, 64) == 0 && dst[64] == 0,
	      "the 64 bytes arrived, and no more");

	/* send-iova: the SGE names the iova; the bytes are the MR's */
	char *iobuf = aligned_alloc(4096, 4096);
	fill(iobuf, 4096, 5);
	uint64_t iova = 0x7000000000ULL;
	struct ibv_mr *mi = ibv_reg_mr_iova(pd, iobuf, 4096, iova, IBV_ACCESS_LOCAL_WRITE);
	if (!mi) {
		perror("ibv_reg_mr_iova");
		return 2;
	}
	memset(dst, 0, 4096);
	struct ibv_sge is = {.addr = iova + 100, .length = 48, .lkey = mi->lkey};
	struct ibv_sge ir = {.addr = (uintptr_t)dst, .length = 1024, .lkey = md->lkey};
	post_recv(&ir, 1);
	wc = send_to_b(&is, 1, &swc);
	check("send-iova", wc.status == IBV_WC_SUCCESS && wc.byte_len == 48 && memcmp(dst, iobuf + 100, 48) == 0,
	      "the 48 bytes at iova + 100 of the MR arrived");
	ibv_dereg_mr(mi);

	/* send-refused: the model refuses the request; the bytes must not land */
	memset(dst, 0, 4096);
	struct ibv_sge bs = {.addr = (uintptr_t)src, .length = 16, .lkey = 0x00abcd00};
	struct ibv_send_wr bw = {.wr_id = 1, .sg_list = &bs, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_sge br = {.addr = (uintptr_t)dst, .length = 64, .lkey = md->lkey};
	post_recv(&br, 1);
	if (ibv_post_send(p.a, &bw, &bad) || poll_one(&wc) < 0)
		return 2;
	expect_status("send-refused", wc.wr_id == 1 ? (int)wc.status : -1, IBV_WC_LOC_PROT_ERR);
	char zero[16] = {0};
	check("send-refused", memcmp(dst, zero, 16) == 0, "the receive buffer is untouched");
	/* the QP is in ERR now (the receive flushes): a fresh pair for the rest */
	while (ibv_poll_cq(p.cq, 1, &wc) > 0)
		;
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	p.a = ibv_create_qp(pd, &ia);
	p.b = ibv_create_qp(pd, &ia);
	if (!p.a || !p.b || connect_qp(p.a, p.b->qp_num) || connect_qp(p.b, p.a->qp_num)) {
		perror("setting up a QP pair");
		return 2;
	}

	/* send-unmapped: the send buffer is unmapped after registration (the pages stay pinned for the NIC) */
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mg = reg(gone, 4096);
	munmap(gone, 4096);
	struct ibv_sge gs = {.addr = (uintptr_t)gone, .length = 16, .lkey = mg->lkey};
	struct ibv_sge gr = {.addr = (uintptr_t)dst, .length = 64, .lkey = md->lkey};
	post_recv(&gr, 1);
	wc = send_to_b(&gs, 1, &swc);
	check("send-unmapped", swc.wr_id == 1 && wc.wr_id == 2, "the send and the receive completed, no crash");

	/* recv-unmapped: the receive buffer is unmapped after registration */
	char *gone2 = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mg2 = reg(gone2, 4096);
	munmap(gone2, 4096);
	struct ibv_sge ur = {.addr = (uintptr_t)gone2, .length = 64, .lkey = mg2->lkey};
	post_recv(&ur, 1);
	fill(src, 16, 3);
	struct ibv_sge us = {.addr = (uintptr_t)src, .length = 16, .lkey = ms->lkey};
	wc = send_to_b(&us, 1, &swc);
	check("recv-unmapped", wc.wr_id == 2 && wc.status == IBV_WC_SUCCESS, "the receive completed, no crash");

	ibv_dereg_mr(mg);
	ibv_dereg_mr(mg2);
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq);
	ibv_dereg_mr(ms);
	ibv_dereg_mr(md);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%s\n", failures ? "FAILED" : "all cases held");
	return failures ? 1 : 0;
}
