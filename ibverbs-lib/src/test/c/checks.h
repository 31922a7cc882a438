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
