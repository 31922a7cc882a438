/*
 * The fabric server's messages through shared memory (src/main/c/ring.c): whether this process maps the ring, and
 * that completions keep their order, count and bytes over several times the ring's length, with no completion
 * channel (nothing sleeps: the server never kicks), then a completion channel's event (its thread sleeps and is
 * kicked), then the same stream again with that thread listening; and a ping-pong (one request in flight), whose polls
 * sleep until the server's kick when RNICSIM_POLL_SPIN_NS is short; and an idle CQ polled with nothing in flight, whose
 * polls sleep (voluntary context switches of the thread) once they have waited RNICSIM_POLL_SPIN_NS (30 us when unset)
 * and only yield with RNICSIM_POLL_SPIN_NS=0 or without the ring. Prints "ring: mapped" or "ring: none", then
 * "ok CASE: ..." or "FAIL CASE: ..." lines; exits 1 on a failure.
 */
#define _GNU_SOURCE
#include "checks.h"

#include <sys/resource.h>

#define ROUNDS 200
#define BATCH 100 /* 200 rounds of 100 SENDs and their receives: 40,000 completions, over 3 MB of messages */
#define PINGPONG_ROUNDS 2000

static char sbuf[BATCH][8], rbuf[BATCH][8];

static int ring_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "rnicsim-ring") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* ROUNDS rounds of BATCH receives on b and BATCH SENDs from a; every completion in order, every byte in place. */
static void stream(const char *name, struct ibv_cq *cq, struct ibv_qp *a, struct ibv_qp *b, struct ibv_mr *smr,
		   struct ibv_mr *rmr)
{
	int in_order = 1, bytes_ok = 1, count = 0;
	for (int round = 0; round < ROUNDS && in_order; round++) {
		for (int i = 0; i < BATCH; i++) {
			struct ibv_sge rs = {(uintptr_t)rbuf[i], sizeof(rbuf[i]), rmr->lkey};
			struct ibv_recv_wr rw = {.wr_id = 1000000 + i, .sg_list = &rs, .num_sge = 1}, *bad_r;
			memset(rbuf[i], 0, sizeof(rbuf[i]));
			snprintf(sbuf[i], sizeof(sbuf[i]), "%03d%04d", round % 1000, i);
			struct ibv_sge ss = {(uintptr_t)sbuf[i], sizeof(sbuf[i]), smr->lkey};
			struct ibv_send_wr sw = {.wr_id = i, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED}, *bad_s;
			if (ibv_post_recv(b, &rw, &bad_r) || ibv_post_send(a, &sw, &bad_s)) {
				check(name, 0, "a post failed");
				return;
			}
		}
		int next_send = 0, next_recv = 0;
		while (next_send < BATCH || next_recv < BATCH) {
			struct ibv_wc wc[16];
			int n = ibv_poll_cq(cq, 16, wc);
			for (int k = 0; k < n; k++) {
				count++;
				if (wc[k].status != IBV_WC_SUCCESS)
					in_order = 0;
				else if (wc[k].opcode == IBV_WC_SEND)
					in_order &= wc[k].wr_id == (uint64_t)next_send++;
				else {
					in_order &= wc[k].wr_id == (uint64_t)(1000000 + next_recv) && wc[k].byte_len == 8;
					bytes_ok &= memcmp(rbuf[next_recv], sbuf[next_recv], 8) == 0;
					next_recv++;
				}
			}
		}
	}
	char what[160];
	snprintf(what, sizeof(what), "%d completions, each queue's in the order posted, every receive holding its "
		 "SEND's bytes", count);
	check(name, in_order && bytes_ok && count == 2 * ROUNDS * BATCH, what);
}

/* A ping-pong's shape: one receive and one SEND at a time (fewer than 4 sends in flight), each completion awaited. */
static void pingpong(struct ibv_cq *cq, struct ibv_qp *a, struct ibv_qp *b, struct ibv_mr *smr, struct ibv_mr *rmr)
{
	int ok = 1, rounds = 0;
	for (int i = 0; i < PINGPONG_ROUNDS && ok; i++, rounds++) {
		struct ibv_sge rs = {(uintptr_t)rbuf[0], 8, rmr->lkey};
		struct ibv_recv_wr rw = {.wr_id = 1000000 + i, .sg_list = &rs, .num_sge = 1}, *bad_r;
		snprintf(sbuf[0], 8, "%07d", i % 10000000);
		struct ibv_sge ss = {(uintptr_t)sbuf[0], 8, smr->lkey};
		struct ibv_send_wr sw = {.wr_id = i, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED}, *bad_s;
		if (ibv_post_recv(b, &rw, &bad_r) || ibv_post_send(a, &sw, &bad_s)) {
			ok = 0;
			break;
		}
		int got_send = 0, got_recv = 0;
		while (!got_send || !got_recv) {
			struct ibv_wc wc;
			if (ibv_poll_cq(cq, 1, &wc) != 1)
				continue;
			if (wc.status != IBV_WC_SUCCESS)
				ok = 0;
			else if (wc.opcode == IBV_WC_SEND)
				got_send = wc.wr_id == (uint64_t)i;
			else
				got_recv = wc.wr_id == (uint64_t)(1000000 + i) && memcmp(rbuf[0], sbuf[0], 8) == 0;
		}
	}
	char what[120];
	snprintf(what, sizeof(what), "%d rounds of one receive and one SEND, each completion as posted", rounds);
	check("pingpong", ok && rounds == PINGPONG_ROUNDS, what);
}

static long voluntary_switches(void)
{
	struct rusage u;
	getrusage(RUSAGE_THREAD, &u);
	return u.ru_nvcsw;
}

/* Nothing in flight, nothing coming: each empty poll yields, and once the wait has lasted RNICSIM_POLL_SPIN_NS the
 * poll sleeps until the server's kick (here none comes: 200 us at most), which the kernel counts as a voluntary
 * context switch; a yield is an involuntary one. Counted over polls, not time. */
static void idle_wait(struct ibv_cq *cq, int ring)
{
	const char *env = getenv("RNICSIM_POLL_SPIN_NS");
	int never = !ring || (env && strcmp(env, "0") == 0); /* on the socket (RNICSIM_RING=0) polls only yield */
	const long polls_max = never ? 20000 : 5000000;
	struct ibv_wc wc;
	long before = voluntary_switches(), polls = 0, sleeps = 0;
	while (polls < polls_max && sleeps < 3) {
		if (ibv_poll_cq(cq, 1, &wc) != 0)
			break;
		polls++;
		sleeps = voluntary_switches() - before;
	}
	char what[120];
	snprintf(what, sizeof(what), "%ld sleeps in %ld empty polls of an idle CQ", sleeps, polls);
	check(never ? "idle-yields" : "idle-sleeps", never ? sleeps == 0 && polls == polls_max : sleeps >= 3, what);
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device **list = open_first_device(&ctx, &pd);
	printf("ring: %s\n", ring_mapped() ? "mapped" : "none");
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * BATCH, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 2 * BATCH, .max_recv_wr = 2 * BATCH, .max_send_sge = 1,
					      .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia), *b = ibv_create_qp(pd, &ia);
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	struct ibv_mr *rmr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	if (!cq || !a || !b || !smr || !rmr || connect_qp(a, b->qp_num) || connect_qp(b, a->qp_num)) {
		perror("setting up");
		return 2;
	}
	stream("stream", cq, a, b, smr, rmr);
	pingpong(cq, a, b, smr, rmr);
	idle_wait(cq, ring_mapped());

	/* a completion channel: its thread sleeps until the server kicks it */
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *ecq = ch ? ibv_create_cq(ctx, 4, NULL, ch, 0) : NULL;
	struct ibv_qp_init_attr ea = ia;
	ea.send_cq = ea.recv_cq = ecq;
	struct ibv_qp *ea_qp = ecq ? ibv_create_qp(pd, &ea) : NULL, *eb_qp = ecq ? ibv_create_qp(pd, &ea) : NULL;
	if (!ea_qp || !eb_qp || connect_qp(ea_qp, eb_qp->qp_num) || connect_qp(eb_qp, ea_qp->qp_num)) {
		perror("setting up the channel");
		return 2;
	}
	ibv_req_notify_cq(ecq, 0);
	struct ibv_sge ss = {(uintptr_t)sbuf[0], 8, smr->lkey};
	struct ibv_send_wr sw = {.wr_id = 7, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED, .wr.rdma = {(uintptr_t)rbuf[0], rmr->rkey}}, *bad;
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx;
	struct ibv_wc wc = {.status = -1};
	int posted = ibv_post_send(ea_qp, &sw, &bad) == 0;
	int got = posted && ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0;
	if (got) {
		ibv_ack_cq_events(ecq, 1);
		while (ibv_poll_cq(ecq, 1, &wc) == 0)
			;
	}
	check("channel-event", got && ev_cq == ecq, "ibv_get_cq_event returned the CQ's event");
	/* the WRITE went into an MR without remote write access */
	expect_status("channel-event-completion", got ? (int)wc.status : -1, IBV_WC_REM_ACCESS_ERR);

	stream("stream-with-channel", cq, a, b, smr, rmr);
	ibv_destroy_qp(ea_qp);
	ibv_destroy_qp(eb_qp);
	ibv_destroy_cq(ecq);
	ibv_destroy_comp_channel(ch);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
