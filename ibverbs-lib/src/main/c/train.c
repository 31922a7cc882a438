/*
 * The training workload of the fabric server's ahead-of-time cache: `./rnicsim` runs it once after each build, under
 * `rnicsim exec` with -XX:AOTCacheOutput, so that the JVM of every later `rnicsim exec` starts with the fabric's
 * classes loaded and linked and with the profiles of its hot methods (JDK 25, JEP 483 and JEP 515), and compiles
 * them sooner. It does what the programs people measure do, on a loopback pair of RC QPs of the first device:
 *
 *   WRITES  64 KiB RDMA WRITEs into an MR registered with IBV_ACCESS_RELAXED_ORDERING, up to 128 in flight, every
 *           16th signaled (as perftest's ib_write_bw posts them)
 *   SENDS   8-byte inline SENDs, each to a posted receive, one at a time (as ib_send_lat)
 *   READS   64 KiB RDMA READs from that MR, up to 128 in flight, every 16th signaled (as ib_read_bw)
 *
 * Usage: rnicsim-train [WRITES [SENDS [READS]]] (defaults 8000, 2000 and 2000), in 4 rounds, each on new QPs and a
 * new MR. Exits 0 when every completion succeeded. The fabric server also runs it on a private fabric while a new fabric waits for its first work request
 * (FabricWarmUp, ProgramWarmUp).
 * It is not part of the library; it links against it.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loopback.h"

#define MSG_BYTES 65536
#define TX_DEPTH 128
#define SIGNAL_EVERY 16
#define ROUNDS 4 /* the workload is split into rounds, each on new QPs and a new MR */

static uint16_t lid;

static void die(const char *what)
{
	fprintf(stderr, "rnicsim-train: %s failed\n", what);
	exit(1);
}

/* Streams n requests of wr on qp, up to TX_DEPTH in flight, every SIGNAL_EVERY-th signaled (n a multiple of it). */
static void stream(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr, long n, const char *what);

static void round_of(struct ibv_context *ctx, long writes, long sends, long reads, int rtr_only);

static int connect_qp(struct ibv_qp *qp, uint32_t remote_qpn)
{
	return loopback_connect(qp, remote_qpn, lid, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

/* Polls until n completions arrived; every one must be a success. */
static void await(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc[16];
	while (n > 0) {
		int got = ibv_poll_cq(cq, n < 16 ? n : 16, wc);
		if (got < 0)
			die("ibv_poll_cq");
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				die(ibv_wc_status_str(wc[i].status));
		n -= got;
	}
}

int main(int argc, char **argv)
{
	const long writes = (argc > 1 ? atol(argv[1]) : 8000) / (SIGNAL_EVERY * ROUNDS) * SIGNAL_EVERY;
	const long sends = (argc > 2 ? atol(argv[2]) : 2000) / ROUNDS;
	const long reads = (argc > 3 ? atol(argv[3]) : 2000) / (SIGNAL_EVERY * ROUNDS) * SIGNAL_EVERY;
	int num;
	struct ibv_device **list = ibv_get_device_list(&num);
	if (!list || num == 0)
		die("ibv_get_device_list");
	struct ibv_context *ctx = ibv_open_device(list[0]);
	struct ibv_port_attr port;
	if (!ctx || ibv_query_port(ctx, 1, &port))
		die("ibv_open_device");
	lid = port.lid;
	for (int r = 0; r < ROUNDS; r++)
		round_of(ctx, writes, sends, reads, r % 2);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}

/*
 * One round: a PD, a buffer and an MR over each half, two CQs and a pair of QPs of their own, the three phases, and all of it destroyed.
 * Each round after the first meets the fabric server hot with what a new program brings (new QPs whose first
 * requests take the paths of a first request, new keys and translations), so those paths are compiled too.
 */
static void round_of(struct ibv_context *ctx, long writes, long sends, long reads, int rtr_only)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf;
	if (!pd || posix_memalign((void **)&buf, 4096, 2 * MSG_BYTES))
		die("ibv_alloc_pd");
	memset(buf, 1, 2 * MSG_BYTES);
	/* an MR per side, as two programs have: the device's translations alternate between them */
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_RELAXED_ORDERING;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, MSG_BYTES, access);
	struct ibv_mr *mr_b = ibv_reg_mr(pd, buf + MSG_BYTES, MSG_BYTES, access);
	/* a CQ per QP, likewise */
	struct ibv_cq *cq = ibv_create_cq(ctx, 2 * TX_DEPTH, NULL, NULL, 0);
	struct ibv_cq *cq_b = ibv_create_cq(ctx, 2 * TX_DEPTH, NULL, NULL, 0);
	if (!mr || !mr_b || !cq || !cq_b)
		die("ibv_reg_mr");
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = TX_DEPTH, .max_recv_wr = TX_DEPTH, .max_send_sge = 1,
					      .max_recv_sge = 1, .max_inline_data = 64}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	ia.send_cq = ia.recv_cq = cq_b;
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	/* b only receives and responds: every other round it stays in RTR, as perftest leaves a bandwidth test's server */
	if (!a || !b || connect_qp(a, b->qp_num) ||
	    (rtr_only ? loopback_to_rtr(b, a->qp_num, lid, NULL, IBV_MTU_4096,
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
		      : connect_qp(b, a->qp_num)))
		die("connecting the QPs");

	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = MSG_BYTES, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .wr.rdma = {.remote_addr = (uintptr_t)buf + MSG_BYTES, .rkey = mr_b->rkey}};
	struct ibv_send_wr *bad;
	stream(a, cq, &wr, writes, "ibv_post_send (WRITE)");

	struct ibv_sge small = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
	struct ibv_sge into = {.addr = (uintptr_t)buf + MSG_BYTES, .length = 8, .lkey = mr_b->lkey};
	struct ibv_recv_wr rwr = {.sg_list = &into, .num_sge = 1};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr swr = {.sg_list = &small, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE};
	for (long i = 0; i < sends; i++) {
		if (ibv_post_recv(b, &rwr, &rbad) || ibv_post_send(a, &swr, &bad))
			die("ibv_post_send (SEND)");
		await(cq, 1);
		await(cq_b, 1);
	}

	wr.opcode = IBV_WR_RDMA_READ;
	stream(a, cq, &wr, reads, "ibv_post_send (READ)");

	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(cq_b);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(mr_b);
	ibv_dealloc_pd(pd);
	free(buf);
}

static void stream(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr, long n, const char *what)
{
	struct ibv_send_wr *bad;
	long posted = 0, completed = 0;
	while (completed < n) {
		while (posted < n && posted - completed < TX_DEPTH) {
			wr->wr_id = posted;
			wr->send_flags = posted % SIGNAL_EVERY == SIGNAL_EVERY - 1 ? IBV_SEND_SIGNALED : 0;
			if (ibv_post_send(qp, wr, &bad))
				die(what);
			posted++;
		}
		await(cq, 1);
		completed += SIGNAL_EVERY;
	}
}
