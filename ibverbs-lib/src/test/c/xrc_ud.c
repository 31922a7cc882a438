/*
 * XRC, the path back to a datagram's sender, and the cases around them, on one device (loopback), with what a real
 * stack answers, checked. Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case
 * got the expected answer. The XRC cases run on a device with IBV_DEVICE_XRC; elsewhere ibv_open_xrcd must answer
 * EOPNOTSUPP.
 *
 *   peer-late     an RC SEND posted while the peer QP is still in INIT; the peer then connects   IBV_WC_SUCCESS, bytes
 *   peer-never    an RC SEND to a QP that never connects (timeout 1, retry_cnt 1)        IBV_WC_RETRY_EXC_ERR
 *   xrcd-open     ibv_open_xrcd: no file; without OFLAGS; a new file without O_CREAT; with O_CREAT; O_EXCL on it;
 *                 the same file again                                       0; EINVAL; EAGAIN; 0; EINVAL; 0
 *   xrc-send      an XRC_SEND QP to an XRC_RECV QP, naming an XRC SRQ of the domain     RECV on the SRQ's CQ, bytes
 *   xrc-srqn      a SEND naming no XRC SRQ of the target's domain                   IBV_WC_REM_INV_REQ_ERR
 *   xrcd-close    ibv_close_xrcd: a handle with nothing made through it while others hold the domain; the
 *                 handle of the SRQ, then of the target QP, while they live; each once they are gone
 *                                                                                 0; EBUSY; EBUSY; 0; 0
 *   ah-from-wc    ibv_init_ah_from_wc of a received datagram; ibv_create_ah_from_wc and a reply to src_qp
 *                 the sender's GID and port; the reply arrives from the responder's QP
 *   ah-grh        a GRH with a multicast destination; with another protocol             EINVAL; EPROTONOSUPPORT
 *   ud-drop       a datagram with a wrong Q_Key (dropped), then one with the right one   the second's bytes arrive
 *   mw-iova       a type 1 window bound in an MR registered at an iova other than its address; a WRITE through it
 *                 the bytes land in the MR's buffer at the window's offset
 *   srq-resize    ibv_modify_srq IBV_SRQ_MAX_WR: on a device without IBV_DEVICE_SRQ_RESIZE (mlx5)   EINVAL
 *                 and ibv_query_srq shows the SRQ unchanged (the granted max_wr, 7 for 4)
 *                 with it (rxe): max_wr 0; max_wr 8                       EINVAL; 0, ibv_query_srq 15
 *
 * Build: gcc -g xrc_ud.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"

#define QKEY 0x11111111

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid0;
static int roce;

static int await_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n;
	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		;
	return n < 0 ? -1000 : (int)wc->status;
}

static int await(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	return await_wc(cq, &wc);
}

static void path(struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = lid;
	ah->port_num = 1;
	if (roce) { /* RoCE has no LIDs: the path names the peer's GID */
		ah->is_global = 1;
		ah->grh.dgid = gid0;
		ah->grh.hop_limit = 1;
	}
}

static int to_init(struct ibv_qp *qp, unsigned access)
{
	return loopback_init(qp, access);
}

/* INIT to RTS of an RC or XRC QP; responder: the RTR attributes of a receiving side (XRC_RECV or RC) */
static int to_rts(struct ibv_qp *qp, uint32_t remote_qpn, int responder, int requester, int timeout, int retry)
{
	return loopback_rtr_rts(qp, remote_qpn, lid, roce ? &gid0 : NULL, IBV_MTU_1024, responder, requester, timeout,
				retry);
}

static int send_one(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey, uint32_t srqn)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 5, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	wr.qp_type.xrc.remote_srqn = srqn;
	return ibv_post_send(qp, &wr, &bad);
}

static int recv_one(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = 9, .sg_list = &sge, .num_sge = 1}, *bad;
	return ibv_post_recv(qp, &wr, &bad);
}

static struct ibv_qp *rc_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	if (!qp || to_init(qp, IBV_ACCESS_REMOTE_WRITE)) {
		perror("an RC QP");
		exit(2);
	}
	return qp;
}

static void peer_cases(char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *a = rc_qp(cq), *b = rc_qp(cq);
	memset(dst, 0, 64);
	if (to_rts(a, b->qp_num, 1, 1, 14, 7) || recv_one(b, dst, 64, md->lkey) || send_one(a, src, 64, ms->lkey, 0)) {
		perror("peer-late setup");
		exit(2);
	}
	/* b connects only now: on a fabric the SEND's retries reach it; its first completion is the SEND's or the RECV's */
	check("peer-late", to_rts(b, a->qp_num, 1, 1, 14, 7) == 0, "the peer QP reached RTS after the SEND was posted");
	struct ibv_wc w1, w2;
	int s1 = await_wc(cq, &w1), s2 = await_wc(cq, &w2);
	expect_status("peer-late", s1, IBV_WC_SUCCESS);
	expect_status("peer-late", s2, IBV_WC_SUCCESS);
	check("peer-late", dst[0] == 'x' && dst[63] == 'x', "the SEND's bytes are in the receive buffer");

	struct ibv_qp *c = rc_qp(cq), *never = rc_qp(cq);
	if (to_rts(c, never->qp_num, 1, 1, 1, 1) || send_one(c, src, 64, ms->lkey, 0)) {
		perror("peer-never setup");
		exit(2);
	}
	expect_status("peer-never", await(cq), IBV_WC_RETRY_EXC_ERR);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(c);
	ibv_destroy_qp(never);
	ibv_destroy_cq(cq);
}

static struct ibv_xrcd *open_xrcd(int fd, int oflags, uint32_t mask)
{
	struct ibv_xrcd_init_attr a = {.comp_mask = mask, .fd = fd, .oflags = oflags};
	errno = 0;
	return ibv_open_xrcd(ctx, &a);
}

static void xrc_cases(char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md)
{
	const uint32_t both = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct ibv_device_attr da;
	if (ibv_query_device(ctx, &da)) {
		perror("ibv_query_device");
		exit(2);
	}
	if (!(da.device_cap_flags & IBV_DEVICE_XRC)) {
		struct ibv_xrcd *x = open_xrcd(-1, 0, both);
		check("xrc-none", !x && errno == EOPNOTSUPP, "a device without IBV_DEVICE_XRC: EOPNOTSUPP");
		return;
	}
	struct ibv_xrcd *anon = open_xrcd(-1, 0, both);
	check("xrcd-open", anon != NULL, "no file (fd -1): a new domain");
	check("xrcd-open", !open_xrcd(-1, 0, IBV_XRCD_INIT_ATTR_FD) && errno == EINVAL, "without OFLAGS: EINVAL");
	char name[] = "/tmp/rnicsim-xrcd-XXXXXX";
	int fd = mkstemp(name);
	if (fd < 0) {
		perror("mkstemp");
		exit(2);
	}
	unlink(name);
	check("xrcd-open", !open_xrcd(fd, 0, both) && errno == EAGAIN, "a file no domain has, without O_CREAT: EAGAIN");
	struct ibv_xrcd *x1 = open_xrcd(fd, O_CREAT, both);
	check("xrcd-open", x1 != NULL, "with O_CREAT: a new domain");
	check("xrcd-open", !open_xrcd(fd, O_CREAT | O_EXCL, both) && errno == EINVAL, "O_EXCL on a file with a domain: EINVAL");
	struct ibv_xrcd *x2 = open_xrcd(fd, 0, both);
	check("xrcd-open", x2 != NULL, "the same file again: its domain");
	if (!anon || !x1 || !x2)
		exit(2);

	/* the SRQ in the domain through the first handle, the target QP through the second: one domain */
	struct ibv_cq *scq = ibv_create_cq(ctx, 8, NULL, NULL, 0), *rcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sa = {.attr = {.max_wr = 4, .max_sge = 1},
					  .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD |
						       IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD,
					  .srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x1, .cq = rcq};
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &sa);
	uint32_t srqn = 0;
	check("xrc-send", srq && ibv_get_srq_num(srq, &srqn) == 0 && srqn != 0, "an XRC SRQ and its number");
	struct ibv_qp_init_attr_ex ra = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x2};
	struct ibv_qp *recv_qp = ibv_create_qp_ex(ctx, &ra);
	struct ibv_qp_init_attr_ex ia = {.qp_type = IBV_QPT_XRC_SEND, .send_cq = scq, .comp_mask = IBV_QP_INIT_ATTR_PD,
					 .pd = pd, .cap = {.max_send_wr = 4, .max_send_sge = 1}};
	struct ibv_qp *send_qp = ibv_create_qp_ex(ctx, &ia);
	if (!srq || !recv_qp || !send_qp || to_init(recv_qp, IBV_ACCESS_REMOTE_WRITE) || to_init(send_qp, 0) ||
	    to_rts(recv_qp, send_qp->qp_num, 1, 0, 14, 7) || to_rts(send_qp, recv_qp->qp_num, 0, 1, 14, 7)) {
		perror("the XRC QPs");
		exit(2);
	}
	memset(dst, 0, 64);
	struct ibv_sge rs = {.addr = (uintptr_t)dst, .length = 64, .lkey = md->lkey};
	struct ibv_recv_wr rw = {.wr_id = 33, .sg_list = &rs, .num_sge = 1}, *rbad;
	if (ibv_post_srq_recv(srq, &rw, &rbad) || send_one(send_qp, src, 48, ms->lkey, srqn)) {
		perror("posting over XRC");
		exit(2);
	}
	expect_status("xrc-send", await(scq), IBV_WC_SUCCESS);
	struct ibv_wc wc;
	expect_status("xrc-send", await_wc(rcq, &wc), IBV_WC_SUCCESS);
	check("xrc-send", wc.wr_id == 33 && wc.qp_num == recv_qp->qp_num && wc.byte_len == 48,
	      "the RECV completed on the SRQ's CQ, naming the XRC_RECV QP");
	check("xrc-send", dst[0] == 'x' && dst[47] == 'x' && dst[48] == 0, "the 48 bytes are in the SRQ's buffer");

	struct ibv_xrcd *x3 = open_xrcd(fd, 0, both);
	check("xrcd-close", x3 && ibv_close_xrcd(x3) == 0, "a handle of a domain other handles hold: 0");
	check("xrcd-close", ibv_close_xrcd(x1) == EBUSY, "the handle of a live SRQ: EBUSY");
	check("xrcd-close", ibv_close_xrcd(x2) == EBUSY, "the handle of a live XRC_RECV QP: EBUSY");

	if (send_one(send_qp, src, 8, ms->lkey, srqn + 0x100)) {
		perror("posting over XRC");
		exit(2);
	}
	expect_status("xrc-srqn", await(scq), IBV_WC_REM_INV_REQ_ERR);

	ibv_destroy_qp(send_qp);
	ibv_destroy_qp(recv_qp);
	ibv_destroy_srq(srq);
	check("xrcd-close", ibv_close_xrcd(x1) == 0, "the SRQ's handle once the SRQ is gone: 0");
	check("xrcd-close", ibv_close_xrcd(x2) == 0, "the last handle once its QP is gone: 0");
	check("xrcd-close", ibv_close_xrcd(anon) == 0, "the domain with no file");
	close(fd);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
}

static struct ibv_qp *ud_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = QKEY};
	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) {
		perror("a UD QP");
		exit(2);
	}
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) {
		perror("UD to RTR");
		exit(2);
	}
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		perror("UD to RTS");
		exit(2);
	}
	return qp;
}

static int ud_send(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, void *buf, uint32_t len,
		   uint32_t lkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 6, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void ud_cases(struct ibv_mr *mr, char *buf)
{
	/* buf: [0, 64) A's payloads, [1024, 1024 + 128) B's receive, [2048, ...) A's receive */
	struct ibv_cq *acq = ibv_create_cq(ctx, 8, NULL, NULL, 0), *bcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *a = ud_qp(acq), *b = ud_qp(bcq);
	struct ibv_ah_attr aa;
	path(&aa);
	struct ibv_ah *to_b = ibv_create_ah(pd, &aa);
	memset(buf, 0, 4096);
	memcpy(buf, "AAAA", 4);
	memcpy(buf + 32, "BBBB", 4);
	if (!to_b || recv_one(b, buf + 1024, 128, mr->lkey) || ud_send(a, to_b, b->qp_num, QKEY + 1, buf, 4, mr->lkey)) {
		perror("ud-drop setup");
		exit(2);
	}
	expect_status("ud-drop", await(acq), IBV_WC_SUCCESS);
	if (ud_send(a, to_b, b->qp_num, QKEY, buf + 32, 4, mr->lkey)) {
		perror("ud-drop");
		exit(2);
	}
	expect_status("ud-drop", await(acq), IBV_WC_SUCCESS);
	struct ibv_wc wc;
	expect_status("ud-drop", await_wc(bcq, &wc), IBV_WC_SUCCESS);
	check("ud-drop", wc.byte_len == 44 && !memcmp(buf + 1024 + 40, "BBBB", 4),
	      "the receive holds the second datagram's bytes, not the dropped one's");

	struct ibv_ah_attr back;
	struct ibv_grh *grh = (struct ibv_grh *)(buf + 1024);
	int r = ibv_init_ah_from_wc(ctx, 1, &wc, grh, &back);
	check("ah-from-wc", r == 0 && back.is_global && back.port_num == 1 && back.grh.sgid_index == 0 &&
				    !memcmp(back.grh.dgid.raw, gid0.raw, 16),
	      "ibv_init_ah_from_wc: a global path to the sender's GID from local GID index 0, port 1");
	check("ah-from-wc", wc.src_qp == a->qp_num, "src_qp names the sender's QP");
	struct ibv_ah *reply = ibv_create_ah_from_wc(pd, &wc, grh, 1);
	check("ah-from-wc", reply != NULL, "ibv_create_ah_from_wc");
	memcpy(buf + 64, "CCCC", 4);
	if (!reply || recv_one(a, buf + 2048, 128, mr->lkey) ||
	    ud_send(b, reply, wc.src_qp, QKEY, buf + 64, 4, mr->lkey)) {
		perror("ah-from-wc reply");
		exit(2);
	}
	expect_status("ah-from-wc", await(bcq), IBV_WC_SUCCESS);
	struct ibv_wc got;
	expect_status("ah-from-wc", await_wc(acq, &got), IBV_WC_SUCCESS);
	check("ah-from-wc", got.src_qp == b->qp_num && !memcmp(buf + 2048 + 40, "CCCC", 4),
	      "the reply arrived from the responder's QP");

	struct ibv_grh bad = *grh;
	bad.dgid.raw[0] = 0xff;
	errno = 0;
	check("ah-grh", ibv_init_ah_from_wc(ctx, 1, &wc, &bad, &back) != 0 && errno == EINVAL,
	      "a multicast destination GID: EINVAL");
	bad = *grh;
	bad.next_hdr = 6;
	errno = 0;
	check("ah-grh", ibv_init_ah_from_wc(ctx, 1, &wc, &bad, &back) != 0 && errno == EPROTONOSUPPORT,
	      "a GRH of another protocol: EPROTONOSUPPORT");
	ibv_destroy_ah(reply);
	ibv_destroy_ah(to_b);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(acq);
	ibv_destroy_cq(bcq);
}

static void mw_iova_case(char *src, struct ibv_mr *ms)
{
	const uint64_t iova = 0x40000000;
	char *target = aligned_alloc(4096, 4096);
	memset(target, 0, 4096);
	struct ibv_mr *m = ibv_reg_mr_iova(pd, target, 4096, iova, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
									   IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_qp *a = rc_qp(cq), *b = rc_qp(cq);
	if (!m || !mw || to_rts(a, b->qp_num, 1, 1, 14, 7) || to_rts(b, a->qp_num, 1, 1, 14, 7)) {
		perror("mw-iova setup");
		exit(2);
	}
	/* a window is bound in the MR's iova space */
	struct ibv_mw_bind bind = {.wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
				   .bind_info = {.mr = m, .addr = iova + 1024, .length = 256,
						 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE}};
	check("mw-iova", ibv_bind_mw(a, mw, &bind) == 0, "ibv_bind_mw at iova + 1024");
	expect_status("mw-iova", await(cq), IBV_WC_SUCCESS);
	struct ibv_sge sge = {.addr = (uintptr_t)src, .length = 16, .lkey = ms->lkey};
	struct ibv_send_wr wr = {.wr_id = 12, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;
	wr.wr.rdma.remote_addr = iova + 1024 + 8;
	wr.wr.rdma.rkey = mw->rkey;
	if (ibv_post_send(a, &wr, &bad)) {
		perror("a WRITE through the window");
		exit(2);
	}
	expect_status("mw-iova", await(cq), IBV_WC_SUCCESS);
	check("mw-iova", target[1031] == 0 && target[1032] == 'x' && target[1047] == 'x' && target[1048] == 0,
	      "the 16 bytes landed at the MR's buffer + 1032 (iova translated through the MR)");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dealloc_mw(mw);
	ibv_dereg_mr(m);
	ibv_destroy_cq(cq);
	free(target);
}

static void srq_resize_case(void)
{
	struct ibv_device_attr da;
	struct ibv_srq_init_attr ia = {.attr = {.max_wr = 4, .max_sge = 1, .srq_limit = 0}};
	struct ibv_srq *srq = ibv_create_srq(pd, &ia);
	if (ibv_query_device(ctx, &da) || !srq) {
		perror("srq-resize setup");
		exit(2);
	}
	struct ibv_srq_attr a = {.max_wr = 8};
	if (da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) {
		struct ibv_srq_attr zero = {.max_wr = 0};
		check("srq-resize", ibv_modify_srq(srq, &zero, IBV_SRQ_MAX_WR) == EINVAL, "max_wr 0: EINVAL");
		check("srq-resize", ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR) == 0, "a device that resizes SRQs: 0");
		struct ibv_srq_attr q;
		/* rxe_queue_resize: a ring of roundup_pow_of_two(8 + 1) slots, rxe_query_srq its index_mask */
		check("srq-resize", ibv_query_srq(srq, &q) == 0 && q.max_wr == 15 && q.srq_limit == 0,
		      "ibv_query_srq: the SRQ resized to max_wr 15");
	} else {
		check("srq-resize", ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT) == EINVAL,
		      "a device without IBV_DEVICE_SRQ_RESIZE: EINVAL");
		struct ibv_srq_attr q;
		check("srq-resize", ibv_query_srq(srq, &q) == 0 && q.max_wr == ia.attr.max_wr && q.max_wr == 7
		      && q.srq_limit == 0, "ibv_query_srq: the SRQ unchanged");
	}
	ibv_destroy_srq(srq);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd); /* sets lid */
	struct ibv_port_attr port;
	if (ibv_query_port(ctx, 1, &port) || ibv_query_gid(ctx, 1, 0, &gid0)) {
		perror("opening the device");
		return 2;
	}
	roce = port.link_layer == IBV_LINK_LAYER_ETHERNET;
	size_t len = 4096;
	char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len), *ud = aligned_alloc(4096, len);
	memset(src, 'x', len);
	memset(dst, 0, len);
	struct ibv_mr *ms = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *md = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *mu = ibv_reg_mr(pd, ud, len, IBV_ACCESS_LOCAL_WRITE);
	if (!ms || !md || !mu) {
		perror("ibv_reg_mr");
		return 2;
	}
	peer_cases(src, ms, dst, md);
	xrc_cases(src, ms, dst, md);
	ud_cases(mu, ud);
	mw_iova_case(src, ms);
	srq_resize_case();
	ibv_dereg_mr(ms);
	ibv_dereg_mr(md);
	ibv_dereg_mr(mu);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
