/*
 * What the C test programs share: the verdict lines ("ok CASE: ..." or "FAIL CASE: ...") and their count, a pair of
 * RC QPs on one CQ, and the three ibv_modify_qp steps that connect a QP to its peer on the same port (loopback).
 * Each program is one translation unit, so the definitions are static here.
 */
#ifndef RNICSIM_TEST_CHECKS_H
#define RNICSIM_TEST_CHECKS_H

#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				.qp_access_flags = qp_access};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = remote_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif
