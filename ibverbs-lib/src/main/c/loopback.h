/*
 * Connecting a QP to its peer on the same port (loopback): the three ibv_modify_qp steps INIT, RTR and RTS with
 * the attributes each transition needs for the QP's role (the kernel's qp_state_table): RC QPs, and the XRC pair. Shared by the library's training program and
 * the module's C test programs; each includes it into one translation unit, so the definition is static.
 */
#ifndef RNICSIM_LOOPBACK_H
#define RNICSIM_LOOPBACK_H

#include <infiniband/verbs.h>
#include <stdint.h>
#include <string.h>

/* RESET to INIT on port 1, letting the peer do what access allows. */
static int loopback_init(struct ibv_qp *qp, unsigned access)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qp_access_flags = access};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* INIT to RTR, connected to remote_qpn at path_mtu: behind lid, or, where gid is not NULL, by a global route to that
 * GID (a RoCE port has no LID). A responder (RC, XRC_RECV) also gives max_dest_rd_atomic and min_rnr_timer, which
 * only its transition takes (the kernel's qp_state_table refuses them otherwise). */
static inline int loopback_rtr(struct ibv_qp *qp, uint32_t remote_qpn, uint16_t lid, const union ibv_gid *gid,
			       enum ibv_mtu path_mtu, int responder)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = remote_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	if (gid) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *gid;
		a.ah_attr.grh.hop_limit = 1;
	} else {
		a.ah_attr.dlid = lid;
	}
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (responder)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

/* Moves an RC qp from RESET to RTR (a QP that only receives and responds, as perftest leaves a bandwidth test's
 * server), connected as loopback_rtr connects it, letting the peer do what access allows. */
static inline int loopback_to_rtr(struct ibv_qp *qp, uint32_t remote_qpn, uint16_t lid, const union ibv_gid *gid,
				  enum ibv_mtu path_mtu, unsigned access)
{
	if (loopback_init(qp, access))
		return -1;
	return loopback_rtr(qp, remote_qpn, lid, gid, path_mtu, 1);
}

/* INIT to RTR to RTS: loopback_rtr, then RTS. A requester (RC, XRC_SEND) gives retry_cnt, rnr_retry 7 and
 * max_rd_atomic at RTS, which only its transition takes; timeout and retry as given. */
static int loopback_rtr_rts(struct ibv_qp *qp, uint32_t remote_qpn, uint16_t lid, const union ibv_gid *gid,
			    enum ibv_mtu path_mtu, int responder, int requester, int timeout, int retry)
{
	if (loopback_rtr(qp, remote_qpn, lid, gid, path_mtu, responder))
		return -1;
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	int mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN;
	if (requester)
		mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

/* Moves an RC qp from RESET to RTS, connected to remote_qpn on port 1 at path_mtu, letting the peer do what access
 * allows: behind lid, or, where gid is not NULL, by a global route to that GID. */
static int loopback_connect_path(struct ibv_qp *qp, uint32_t remote_qpn, uint16_t lid, const union ibv_gid *gid,
				 enum ibv_mtu path_mtu, unsigned access)
{
	if (loopback_init(qp, access))
		return -1;
	return loopback_rtr_rts(qp, remote_qpn, lid, gid, path_mtu, 1, 1, 14, 7);
}

/* The same behind lid, at a path MTU of 4096. */
static int loopback_connect(struct ibv_qp *qp, uint32_t remote_qpn, uint16_t lid, unsigned access)
{
	return loopback_connect_path(qp, remote_qpn, lid, NULL, IBV_MTU_4096, access);
}

#endif
