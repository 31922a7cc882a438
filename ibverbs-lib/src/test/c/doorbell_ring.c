/*
 * The library's doorbells through shared memory (src/main/c/ring.c, the doorbell ring): whether this process maps
 * the ring, and that doorbells keep their order and bytes: a ping-pong (one receive and one SEND at a time, so the
 * server sleeps and is kicked between rounds), one ibv_post_send of a chain longer than the whole ring (it goes in
 * pieces as the server makes room), and a parent and its forked child ringing at once on the connection they share.
 * Prints "doorbells: ring" or "doorbells: socket", then "ok CASE: ..." or "FAIL CASE: ..." lines; exits 1 on a
 * failure.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>

#include "checks.h"

#define PINGPONG_ROUNDS 2000
#define CHAIN_WRS 4096 /* 4,096 WRITEs of 16 SGEs each: about 1.3 MB of doorbell, more than the ring's 1 MiB */
#define CHAIN_SGES 16
#define FORK_SENDS 2000

static char sbuf[CHAIN_WRS * CHAIN_SGES], tbuf[CHAIN_WRS * CHAIN_SGES];
static char fork_s[2][FORK_SENDS][8], fork_r[2][FORK_SENDS][8];

static int doorbells_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, "rnicsim-doorbells") != NULL;
	if (f)
		fclose(f);
	return found;
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n;
	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		;
	return n == 1 && wc->status == IBV_WC_SUCCESS;
}

static void pingpong(struct ibv_cq *cq, struct ibv_qp *a, struct ibv_qp *b, struct ibv_mr *smr, struct ibv_mr *rmr)
{
	int ok = 1, rounds = 0;
	for (int i = 0; i < PINGPONG_ROUNDS && ok; i++, rounds++) {
		struct ibv_sge rs = {(uintptr_t)fork_r[0][0], 8, rmr->lkey};
		struct ibv_recv_wr rw = {.wr_id = 1000000 + i, .sg_list = &rs, .num_sge = 1}, *bad_r;
		snprintf(fork_s[0][0], 8, "%07d", i);
		struct ibv_sge ss = {(uintptr_t)fork_s[0][0], 8, smr->lkey};
		struct ibv_send_wr sw = {.wr_id = i, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED}, *bad_s;
		if (ibv_post_recv(b, &rw, &bad_r) || ibv_post_send(a, &sw, &bad_s))
			ok = 0;
		for (int got = 0; ok && got < 2; got++) {
			struct ibv_wc wc;
			ok = wait_wc(cq, &wc) && (wc.opcode == IBV_WC_SEND ? wc.wr_id == (uint64_t)i
									  : wc.wr_id == (uint64_t)(1000000 + i) &&
										    memcmp(fork_r[0][0], fork_s[0][0], 8) == 0);
		}
	}
	char what[120];
	snprintf(what, sizeof(what), "%d rounds of one receive and one SEND, each completion as posted", rounds);
	check("pingpong", ok && rounds == PINGPONG_ROUNDS, what);
}

/* One ibv_post_send of CHAIN_WRS WRITEs, each gathering CHAIN_SGES bytes one SGE each; only the last is signaled. */
static void long_chain(struct ibv_cq *cq, struct ibv_qp *a, struct ibv_mr *smr, struct ibv_mr *tmr)
{
	static struct ibv_send_wr wr[CHAIN_WRS];
	static struct ibv_sge sge[CHAIN_WRS][CHAIN_SGES];
	for (size_t i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (char)(i * 7 + 3);
	memset(tbuf, 0, sizeof(tbuf));
	for (int i = 0; i < CHAIN_WRS; i++) {
		for (int k = 0; k < CHAIN_SGES; k++)
			sge[i][k] = (struct ibv_sge){(uintptr_t)&sbuf[i * CHAIN_SGES + k], 1, smr->lkey};
		wr[i] = (struct ibv_send_wr){.wr_id = i, .sg_list = sge[i], .num_sge = CHAIN_SGES,
					     .opcode = IBV_WR_RDMA_WRITE,
					     .send_flags = i == CHAIN_WRS - 1 ? IBV_SEND_SIGNALED : 0,
					     .wr.rdma = {(uintptr_t)&tbuf[i * CHAIN_SGES], tmr->rkey},
					     .next = i + 1 < CHAIN_WRS ? &wr[i + 1] : NULL};
	}
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int posted = ibv_post_send(a, &wr[0], &bad) == 0;
	int done = posted && wait_wc(cq, &wc) && wc.wr_id == CHAIN_WRS - 1;
	int bytes = done && memcmp(sbuf, tbuf, sizeof(tbuf)) == 0;
	char what[160];
	snprintf(what, sizeof(what), "%d WRITEs of %d SGEs in one post (posted %d, last completion %d), every byte in "
		 "place %d", CHAIN_WRS, CHAIN_SGES, posted, done, bytes);
	check("long-chain", posted && done && bytes, what);
}

/* The child rings SENDs on c (into receives on d) while the parent rings SENDs on a (into receives on b). */
static void forked(struct ibv_cq *cq, struct ibv_qp *a, struct ibv_qp *b, struct ibv_qp *c, struct ibv_qp *d,
		   struct ibv_mr *smr, struct ibv_mr *rmr)
{
	struct ibv_qp *recv_qp[2] = {b, d};
	for (int side = 0; side < 2; side++)
		for (int i = 0; i < FORK_SENDS; i++) {
			struct ibv_sge rs = {(uintptr_t)fork_r[side][i], 8, rmr->lkey};
			struct ibv_recv_wr rw = {.wr_id = side * 1000000 + i, .sg_list = &rs, .num_sge = 1}, *bad_r;
			if (ibv_post_recv(recv_qp[side], &rw, &bad_r)) {
				check("fork", 0, "posting the receives failed");
				return;
			}
		}
	pid_t child = fork();
	if (child < 0) {
		check("fork", 0, "fork failed");
		return;
	}
	int side = child == 0 ? 1 : 0;
	struct ibv_qp *send_qp = side ? c : a;
	int post_failed = 0;
	for (int i = 0; i < FORK_SENDS; i++) {
		/* the child's bytes exist only in the child: they reach the receive through its doorbell */
		snprintf(fork_s[side][i], 8, "%c%06d", side ? 'c' : 'p', i);
		struct ibv_sge ss = {(uintptr_t)fork_s[side][i], 8, smr->lkey};
		struct ibv_send_wr sw = {.wr_id = side * 1000000 + i, .sg_list = &ss, .num_sge = 1,
					 .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad_s;
		post_failed |= ibv_post_send(send_qp, &sw, &bad_s) != 0;
	}
	if (child == 0)
		_exit(post_failed ? 3 : 0); /* the parent polls every completion */
	int status = 0;
	waitpid(child, &status, 0);
	int recvs[2] = {0, 0}, sends = 0, in_order = 1;
	while (recvs[0] + recvs[1] + sends < 4 * FORK_SENDS && in_order) {
		struct ibv_wc wc;
		if (!wait_wc(cq, &wc)) {
			in_order = 0;
			break;
		}
		if (wc.opcode == IBV_WC_SEND) {
			sends++;
			continue;
		}
		int s = wc.qp_num == d->qp_num;
		char want[8];
		snprintf(want, sizeof(want), "%c%06d", s ? 'c' : 'p', recvs[s]);
		in_order &= wc.wr_id == (uint64_t)(s * 1000000 + recvs[s]) && memcmp(fork_r[s][recvs[s]], want, 8) == 0;
		recvs[s]++;
	}
	char what[200];
	snprintf(what, sizeof(what), "parent and child rang %d SENDs each at once (child exit %d): %d and %d receives "
		 "in order with their sender's bytes, %d send completions", FORK_SENDS,
		 WIFEXITED(status) ? WEXITSTATUS(status) : -1, recvs[0], recvs[1], sends);
	check("fork", !post_failed && WIFEXITED(status) && WEXITSTATUS(status) == 0 && in_order &&
			      recvs[0] == FORK_SENDS && recvs[1] == FORK_SENDS && sends == 2 * FORK_SENDS,
	      what);
}

int main(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	open_first_device(&ctx, &pd);
	printf("doorbells: %s\n", doorbells_mapped() ? "ring" : "socket");
	struct ibv_cq *cq = ibv_create_cq(ctx, 8 * FORK_SENDS, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = CHAIN_WRS + 1, .max_recv_wr = FORK_SENDS + 1,
					      .max_send_sge = CHAIN_SGES, .max_recv_sge = 1}};
	struct ibv_qp *qp[4];
	for (int i = 0; i < 4; i++)
		qp[i] = ibv_create_qp(pd, &ia);
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, sizeof(sbuf), 0);
	struct ibv_mr *fsmr = ibv_reg_mr(pd, fork_s, sizeof(fork_s), 0);
	struct ibv_mr *tmr = ibv_reg_mr(pd, tbuf, sizeof(tbuf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *rmr = ibv_reg_mr(pd, fork_r, sizeof(fork_r), IBV_ACCESS_LOCAL_WRITE);
	if (!cq || !qp[0] || !qp[1] || !qp[2] || !qp[3] || !smr || !fsmr || !tmr || !rmr ||
	    connect_qp(qp[0], qp[1]->qp_num) || connect_qp(qp[1], qp[0]->qp_num) || connect_qp(qp[2], qp[3]->qp_num) ||
	    connect_qp(qp[3], qp[2]->qp_num)) {
		perror("setting up");
		return 2;
	}
	pingpong(cq, qp[0], qp[1], fsmr, rmr);
	long_chain(cq, qp[0], smr, tmr);
	forked(cq, qp[0], qp[1], qp[2], qp[3], fsmr, rmr);
	return failures ? 1 : 0;
}
