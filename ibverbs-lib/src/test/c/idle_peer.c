/*
 * Two programs on one fabric, one of which calls no verb for a while: the other must go on. A real NIC writes CQEs
 * into a CQ whatever its owner does; a program that sleeps, computes or is stopped in a debugger holds up no other.
 *
 *   idle_peer recv DIR   posts N receives on an RC QP, publishes its QP number in DIR/recv.qpn, connects to the QP
 *                        number in DIR/send.qpn, then calls no verb until DIR/done appears (N SENDs have arrived in the
 *                        meantime), then polls its CQ: N receive completions, each successful
 *   idle_peer send DIR   publishes DIR/send.qpn, connects to DIR/recv.qpn, sends N SENDs (each completion
 *                        successful), then writes DIR/done
 *
 * N is larger than the messages the fabric server can hand the sleeping program at once, so the SENDs complete only
 * if the server never waits for the sleeper to make room. Prints "ok ROLE: ..." or "FAIL ROLE: ..." and exits 0 when
 * its side held.
 *
 * Build: gcc -g idle_peer.c -libverbs.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"

#define N 30000
#define GIVE_UP_MS 120000

static char path[512];

static const char *at(const char *dir, const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void publish(const char *dir, const char *name, unsigned value)
{
	char tmp[600];
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	FILE *f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", value) < 0 || fclose(f) || rename(tmp, at(dir, name))) {
		perror(tmp);
		exit(2);
	}
}

/* Waits (without a verb) for a file; returns its number, or -1 after GIVE_UP_MS. */
static long await(const char *dir, const char *name)
{
	for (int ms = 0; ms < GIVE_UP_MS; ms += 10) {
		FILE *f = fopen(at(dir, name), "r");
		unsigned v;
		if (f) {
			int k = fscanf(f, "%u", &v);
			fclose(f);
			if (k == 1)
				return v;
		}
		usleep(10000);
	}
	return -1;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "recv") && strcmp(argv[1], "send"))) {
		fprintf(stderr, "usage: idle_peer recv|send DIR\n");
		return 2;
	}
	const int recv = !strcmp(argv[1], "recv");
	const char *dir = argv[2];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	open_first_device(&ctx, &pd);
	char *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *cq = ibv_create_cq(ctx, N + 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 64, .max_recv_wr = N, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = mr && cq ? ibv_create_qp(pd, &ia) : NULL;
	struct ibv_qp_attr init = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	if (!qp || ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		perror("setting up");
		return 2;
	}
	if (recv) {
		for (int i = 0; i < N; i++) {
			struct ibv_sge s = {.addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey};
			struct ibv_recv_wr w = {.wr_id = i, .sg_list = &s, .num_sge = 1}, *bad;
			if (ibv_post_recv(qp, &w, &bad)) {
				perror("ibv_post_recv");
				return 2;
			}
		}
	}
	publish(dir, recv ? "recv.qpn" : "send.qpn", qp->qp_num);
	long peer = await(dir, recv ? "send.qpn" : "recv.qpn");
	if (peer < 0 || connect_qp(qp, (uint32_t)peer)) {
		perror("connecting");
		return 2;
	}
	int done = 0, bad_status = 0;
	struct ibv_wc wc[64];
	if (recv) {
		/* no verb while the SENDs arrive: as a program that sleeps, or one stopped in a debugger */
		long finished = await(dir, "done");
		check("recv", finished == N, finished == N ? "the sender finished while this program called no verb"
							   : "the sender never finished while this program slept");
		while (done < N) {
			int n = ibv_poll_cq(cq, 64, wc);
			if (n < 0)
				break;
			for (int i = 0; i < n; i++)
				bad_status += wc[i].status != IBV_WC_SUCCESS;
			done += n;
		}
		check("recv", done == N && !bad_status, "every receive completed, successfully, when polled at last");
	} else {
		int sent = 0, out = 0;
		while (done < N && !bad_status) {
			while (out < 32 && sent < N) {
				struct ibv_sge s = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
				struct ibv_send_wr w = {.wr_id = sent, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
							.send_flags = IBV_SEND_SIGNALED}, *bad;
				if (ibv_post_send(qp, &w, &bad)) {
					perror("ibv_post_send");
					return 2;
				}
				sent++;
				out++;
			}
			int n = ibv_poll_cq(cq, 64, wc);
			for (int i = 0; i < n; i++)
				bad_status += wc[i].status != IBV_WC_SUCCESS;
			done += n > 0 ? n : 0;
			out -= n > 0 ? n : 0;
		}
		check("send", done == N && !bad_status, "every SEND completed successfully");
		publish(dir, "done", done);
	}
	printf("%s\n", failures ? "FAILED" : "all cases held");
	return failures ? 1 : 0;
}
