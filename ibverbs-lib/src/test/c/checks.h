/*
 * What the C test programs share: the verdict lines ("ok CASE: ..." or "FAIL CASE: ...") and their count, a pair of
 * RC QPs on one CQ, opening the first device, and connecting a QP to its peer on the same port (loopback.h).
 * Each program is one translation unit, so the definitions are static here.
 */
#ifndef RNICSIM_TEST_CHECKS_H
#define RNICSIM_TEST_CHECKS_H

#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../main/c/loopback.h"

static uint16_t lid;
static int failures;
/* What each QP lets its peer do (qp_access_flags at INIT). */
static unsigned qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct pair {
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
};

static void check(const char *name, int ok, const char *what)
{
	printf("%s %s: %s\n", ok ? "ok" : "FAIL", name, what);
	fflush(stdout);
	if (!ok)
		failures++;
}

static void expect_status(const char *name, int got, int want)
{
	char what[160];
	snprintf(what, sizeof(what), "completion %s (%d), expected %s", got >= 0 ? ibv_wc_status_str(got) : "none",
		 got, ibv_wc_status_str(want));
	check(name, got == want, what);
}

static int connect_qp(struct ibv_qp *qp, uint32_t remote_qpn)
{
	return loopback_connect(qp, remote_qpn, lid, qp_access);
}

/* Two RC QPs of pd connected to each other (RC, 8 send and receive WRs, 2 send SGEs), their send completions (and,
 * without recv_cq, their receive ones) on a new CQ; exits 2 when that cannot be set up. */
static inline struct pair pair_new(struct ibv_pd *pd, struct ibv_cq *recv_cq)
{
	struct pair p;
	p.cq = ibv_create_cq(pd->context, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = p.cq, .recv_cq = recv_cq ? recv_cq : p.cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 1}};
	p.a = ibv_create_qp(pd, &ia);
	p.b = ibv_create_qp(pd, &ia);
	if (!p.cq || !p.a || !p.b || connect_qp(p.a, p.b->qp_num) || connect_qp(p.b, p.a->qp_num)) {
		perror("setting up a QP pair");
		exit(2);
	}
	return p;
}

static inline void pair_free(struct pair p)
{
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq);
}

/* The status of the next completion of cq, polled for as long as it takes (a program that hangs fails its test's
 * timeout); -1000 when polling fails. */
static inline int await_status(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	return n < 0 ? -1000 : (int)wc.status;
}

/* ibv_post_send of wr, signaled. */
static inline int post_signaled(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

/* The first device, a PD on it, and port 1's LID in lid; exits 2 (nothing to test) when one is missing. */
static struct ibv_device **open_first_device(struct ibv_context **ctx, struct ibv_pd **pd)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "no RDMA device\n");
		exit(2);
	}
	*ctx = ibv_open_device(list[0]);
	*pd = *ctx ? ibv_alloc_pd(*ctx) : NULL;
	struct ibv_port_attr port;
	if (!*pd || ibv_query_port(*ctx, 1, &port)) {
		perror("opening the device");
		exit(2);
	}
	lid = port.lid;
	return list;
}

#endif
