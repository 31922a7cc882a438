/*
 * The control verbs beyond PD, MR, CQ and QP, each on fresh RC QPs of one device (loopback), with what a real stack
 * answers, checked. Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got
 * the expected answer.
 *
 *   channel-nonblock  ibv_get_cq_event on a non-blocking channel fd with no event   -1, EAGAIN
 *   channel-poll      poll(2) on the channel fd, no verb called, until a RECV completes   readable; the event names the CQ
 *   rereg-access      ibv_rereg_mr CHANGE_ACCESS adds REMOTE_WRITE; a WRITE with the new rkey   0; IBV_WC_SUCCESS
 *   rereg-input       CHANGE_TRANSLATION without an address                         IBV_REREG_MR_ERR_INPUT, EINVAL
 *   rereg-move        CHANGE_TRANSLATION to another buffer; a WRITE lands there     0; the bytes arrive
 *   mw1-bind          ibv_bind_mw of a type 1 window; a WRITE through its rkey      IBV_WC_SUCCESS twice
 *   mw2-bind          a BIND_MW work request for a type 2 window; a WRITE through it   IBV_WC_SUCCESS twice
 *   mw2-inv           LOCAL_INV of the window; a WRITE with its rkey                IBV_WC_SUCCESS; IBV_WC_REM_ACCESS_ERR
 *   qp-err            ibv_query_qp of the requester after that error                IBV_QPS_ERR
 *   pd-busy           ibv_dealloc_pd of a PD with an MR                              EBUSY
 *   cq-ex             ibv_create_cq_ex; a SEND_WITH_IMM's RECV read with start_poll, read_*, next_poll, end_poll
 *   cq-ex-flags       ibv_create_cq_ex asking for a field mlx5 does not fill (bit 12)      NULL, EOPNOTSUPP
 *   srq-recv          two SENDs to a QP that takes its receives from an SRQ         in order, on that QP, bytes placed
 *   srq-limit         ibv_modify_srq IBV_SRQ_LIMIT, then ibv_query_srq               the new limit
 *   srq-resize        ibv_modify_srq IBV_SRQ_MAX_WR (mlx5 cannot resize)             EINVAL
 *   srq-sge           ibv_post_srq_recv with more SGEs than max_sge                  EINVAL, bad_wr the request
 *   srq-busy          ibv_destroy_srq while a QP uses it                             EBUSY; 0 once the QP is gone
 *   atomic-access     an atomic to a QP without REMOTE_ATOMIC (mlx5 posts it: atomics come from atomic_cap)
 *                                                 IBV_WC_REM_INV_REQ_ERR (the responder QP refuses atomics)
 *   post-refused      an atomic with a 4-byte SGE: mlx5 posts it, the device cannot execute it
 *                                                 IBV_WC_LOC_QP_OP_ERR; the next request IBV_WC_WR_FLUSH_ERR
 *   ud-qp, ud-ah      a UD QP and an address handle; an AH for a LID no port has          EINVAL
 *
 * Build: gcc -g control_verbs.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

/* Posts one RDMA WRITE from a to b and returns its completion status (or -errno of the post). */
static int write_status(struct pair p, void *from, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)from, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE};
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	int e = post_signaled(p.a, &wr);
	return e ? -e : await_status(p.cq);
}

static void channel_cases(char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *ev = ch ? ibv_create_cq(ctx, 16, (void *)0x5eed, ch, 0) : NULL;
	if (!ev) {
		perror("ibv_create_comp_channel or ibv_create_cq");
		exit(2);
	}
	struct pair p = pair_new(pd, ev);
	ibv_req_notify_cq(ev, 0);

	int flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	struct ibv_cq *got;
	void *cq_ctx;
	int r = ibv_get_cq_event(ch, &got, &cq_ctx);
	check("channel-nonblock", r == -1 && errno == EAGAIN, "no event yet: -1 with EAGAIN");
	fcntl(ch->fd, F_SETFL, flags);

	struct ibv_sge rs = {.addr = (uintptr_t)dst, .length = 64, .lkey = md->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)src, .length = 64, .lkey = ms->lkey};
	struct ibv_send_wr swr = {.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND};
	if (ibv_post_recv(p.b, &rwr, &rbad) || post_signaled(p.a, &swr)) {
		perror("posting a SEND");
		exit(2);
	}
	/* no verb from here until the fd is readable: the kernel's channel wakes a program blocked in poll() */
	struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
	int ready = poll(&pfd, 1, 60000);
	check("channel-poll", ready == 1 && (pfd.revents & POLLIN), ready == 1 ? "the channel's fd became readable"
		    : "poll timed out after 60 s: the event never reached the fd");
	if (ready == 1) {
		r = ibv_get_cq_event(ch, &got, &cq_ctx);
		check("channel-poll", r == 0 && got == ev && cq_ctx == (void *)0x5eed,
		      "ibv_get_cq_event names the CQ and its context");
		ibv_ack_cq_events(ev, 1);
		struct ibv_wc wc;
		check("channel-poll", ibv_poll_cq(ev, 1, &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS &&
					      wc.byte_len == 64, "the RECV's completion is in the CQ");
	}
	await_status(p.cq); /* the SEND */
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq);
	ibv_destroy_cq(ev);
	ibv_destroy_comp_channel(ch);
}

static void cq_ex_cases(char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .cq_context = (void *)0xc0, .wc_flags =
					 IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	if (!cqx) {
		perror("ibv_create_cq_ex");
		exit(2);
	}
	struct pair p = pair_new(pd, ibv_cq_ex_to_cq(cqx));
	struct ibv_sge rs = {.addr = (uintptr_t)dst, .length = 256, .lkey = md->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 31, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)src, .length = 48, .lkey = ms->lkey};
	struct ibv_send_wr swr = {.wr_id = 32, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND_WITH_IMM};
	swr.imm_data = htobe32(0xabcd1234);
	if (ibv_post_recv(p.b, &rwr, &rbad) || post_signaled(p.a, &swr)) {
		perror("posting a SEND_WITH_IMM");
		exit(2);
	}
	struct ibv_poll_cq_attr pa = {0};
	int r;
	while ((r = ibv_start_poll(cqx, &pa)) == ENOENT)
		;
	check("cq-ex", r == 0 && cqx->status == IBV_WC_SUCCESS && cqx->wr_id == 31, "ibv_start_poll: the RECV, success");
	check("cq-ex", ibv_wc_read_opcode(cqx) == IBV_WC_RECV && ibv_wc_read_byte_len(cqx) == 48 &&
			       ibv_wc_read_qp_num(cqx) == p.b->qp_num && be32toh(ibv_wc_read_imm_data(cqx)) == 0xabcd1234 &&
			       (ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM),
	      "read_opcode, read_byte_len, read_qp_num, read_imm_data and read_wc_flags give the RECV's fields");
	check("cq-ex", ibv_next_poll(cqx) == ENOENT, "ibv_next_poll: nothing more");
	ibv_end_poll(cqx);
	check("cq-ex", await_status(p.cq) == IBV_WC_SUCCESS, "the SEND completed on its own CQ");
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq);
	check("cq-ex", ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "ibv_destroy_cq frees it");

	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK << 1; /* past CREATE_CQ_SUPPORTED_WC_FLAGS */
	errno = 0;
	struct ibv_cq_ex *odd = ibv_create_cq_ex(ctx, &ca);
	check("cq-ex-flags", odd == NULL && errno == EOPNOTSUPP, "a field mlx5 does not fill: NULL with EOPNOTSUPP");
}

static void srq_cases(char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	if (!srq) {
		perror("ibv_create_srq");
		exit(2);
	}
	check("srq-create", sa.attr.max_wr >= 16 && sa.attr.max_sge >= 1, "the granted max_wr and max_sge");
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	ia.srq = srq;
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	if (!cq || !a || !b || connect_qp(a, b->qp_num) || connect_qp(b, a->qp_num)) {
		perror("setting up QPs with an SRQ");
		exit(2);
	}
	struct ibv_sge rs[2] = {{.addr = (uintptr_t)dst, .length = 64, .lkey = md->lkey},
				{.addr = (uintptr_t)dst + 512, .length = 64, .lkey = md->lkey}};
	struct ibv_recv_wr r2 = {.wr_id = 42, .sg_list = &rs[1], .num_sge = 1};
	struct ibv_recv_wr r1 = {.wr_id = 41, .sg_list = &rs[0], .num_sge = 1, .next = &r2}, *rbad;
	check("srq-recv", ibv_post_srq_recv(srq, &r1, &rbad) == 0, "two receives posted to the SRQ");
	src[100] = 'y';
	for (int i = 0; i < 2; i++) {
		struct ibv_sge ss = {.addr = (uintptr_t)src + 100 * i, .length = 16, .lkey = ms->lkey};
		struct ibv_send_wr swr = {.wr_id = 50 + i, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED}, *sbad;
		ibv_post_send(a, &swr, &sbad);
	}
	uint64_t recv_ids[2];
	uint32_t recv_qps[2];
	int recvs = 0, sends = 0;
	while (recvs + sends < 4) {
		struct ibv_wc wc;
		if (ibv_poll_cq(cq, 1, &wc) != 1)
			continue;
		if (wc.opcode == IBV_WC_RECV && recvs < 2) {
			recv_ids[recvs] = wc.status == IBV_WC_SUCCESS ? wc.wr_id : 0;
			recv_qps[recvs++] = wc.qp_num;
		} else {
			sends++;
		}
	}
	check("srq-recv", recv_ids[0] == 41 && recv_ids[1] == 42 && recv_qps[0] == b->qp_num && recv_qps[1] == b->qp_num,
	      "the SRQ's receives completed in order on the QP that took them");
	check("srq-recv", dst[0] == 'x' && dst[512] == 'y' && dst[16] == 0, "each SEND's bytes are in its receive buffer");

	struct ibv_srq_attr at = {.srq_limit = 1};
	struct ibv_srq_attr q = {0};
	check("srq-limit", ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT) == 0 && ibv_query_srq(srq, &q) == 0 &&
				   q.srq_limit == 1 && q.max_wr >= 16, "ibv_query_srq shows the limit set");
	at.max_wr = 64;
	check("srq-resize", ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR) == EINVAL, "resizing: EINVAL");
	struct ibv_sge two[2] = {rs[0], rs[1]};
	struct ibv_recv_wr big = {.wr_id = 43, .sg_list = two, .num_sge = 2};
	rbad = NULL;
	check("srq-sge", ibv_post_srq_recv(srq, &big, &rbad) == EINVAL && rbad == &big,
	      "more SGEs than max_sge: EINVAL, bad_wr the request");
	check("srq-busy", ibv_destroy_srq(srq) == EBUSY, "ibv_destroy_srq while a QP uses it: EBUSY");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	check("srq-busy", ibv_destroy_srq(srq) == 0, "ibv_destroy_srq once its QP is gone: 0");
}

static void refusal_cases(char *src, struct ibv_mr *ms, char *dst, struct ibv_mr *md)
{
	struct pair p = pair_new(pd, NULL);
	struct ibv_sge sge = {.addr = (uintptr_t)src, .length = 8, .lkey = ms->lkey};
	struct ibv_send_wr wr = {.wr_id = 61, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				 .send_flags = IBV_SEND_SIGNALED}, *bad = NULL;
	wr.wr.atomic.remote_addr = (uintptr_t)dst;
	wr.wr.atomic.rkey = md->rkey;
	wr.wr.atomic.compare_add = 1;
	int r = ibv_post_send(p.a, &wr, &bad);
	check("atomic-access", r == 0, "posted: mlx5 enables atomics on every QP of a device with atomic_cap ATOMIC_HCA");
	expect_status("atomic-access", r ? -r : await_status(p.cq), IBV_WC_REM_INV_REQ_ERR);
	pair_free(p);

	qp_access |= IBV_ACCESS_REMOTE_ATOMIC;
	p = pair_new(pd, NULL);
	qp_access &= ~IBV_ACCESS_REMOTE_ATOMIC;
	sge.length = 4; /* an atomic needs one SGE of 8 bytes */
	r = ibv_post_send(p.a, &wr, &bad);
	check("post-refused", r == 0, "ibv_post_send returned 0 (the provider does not check the SGE's length)");
	struct ibv_wc wc = {0};
	while (ibv_poll_cq(p.cq, 1, &wc) == 0)
		;
	check("post-refused", wc.wr_id == 61 && wc.status == IBV_WC_LOC_QP_OP_ERR,
	      "the request completed with IBV_WC_LOC_QP_OP_ERR");
	expect_status("post-refused", write_status(p, src, 16, ms->lkey, (uintptr_t)dst, md->rkey), IBV_WC_WR_FLUSH_ERR);
	pair_free(p);
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	size_t len = 4096;
	char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len), *dst2 = aligned_alloc(4096, len);
	memset(src, 'x', len);
	memset(dst, 0, len);
	memset(dst2, 0, len);
	struct ibv_mr *ms = ibv_reg_mr(pd, src, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *md = ibv_reg_mr(pd, dst, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!ms || !md) {
		perror("ibv_reg_mr");
		return 2;
	}

	channel_cases(src, ms, dst, md);
	memset(dst, 0, len);
	cq_ex_cases(src, ms, dst, md);
	memset(dst, 0, len);
	srq_cases(src, ms, dst, md);
	memset(dst, 0, len);
	refusal_cases(src, ms, dst, md);
	memset(dst, 0, len);

	struct ibv_cq *ucq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp_init_attr ua = {.send_cq = ucq, .recv_cq = ucq, .qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	errno = 0;
	struct ibv_qp *ud = ibv_create_qp(pd, &ua);
	check("ud-qp", ud != NULL && ud->qp_type == IBV_QPT_UD, "ibv_create_qp of a UD QP");
	struct ibv_ah_attr aa = {.dlid = lid, .port_num = 1};
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	check("ud-ah", ah != NULL && ah->pd == pd, "ibv_create_ah for the port's LID");
	struct ibv_ah_attr nowhere = {.dlid = 0x7fff, .port_num = 1};
	errno = 0;
	check("ud-ah", ibv_create_ah(pd, &nowhere) == NULL && errno == EINVAL, "ibv_create_ah for no port: EINVAL");
	check("ud-ah", ah && ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
	check("ud-qp", ud && ibv_destroy_qp(ud) == 0, "ibv_destroy_qp of the UD QP");
	ibv_destroy_cq(ucq);

	struct pair p = pair_new(pd, NULL);
	/* md has no REMOTE_WRITE yet: rereg adds it */
	int r = ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	check("rereg-access", r == 0, "ibv_rereg_mr CHANGE_ACCESS returned 0");
	expect_status("rereg-access", write_status(p, src, 64, ms->lkey, (uintptr_t)dst, md->rkey), IBV_WC_SUCCESS);
	check("rereg-access", dst[0] == 'x', "the bytes arrived with the rkey after rereg");

	errno = 0;
	r = ibv_rereg_mr(md, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, len, 0);
	check("rereg-input", r == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "CHANGE_TRANSLATION without an address: IBV_REREG_MR_ERR_INPUT with EINVAL");

	struct ibv_mr *m2 = ibv_reg_mr(pd, dst2, len, IBV_ACCESS_LOCAL_WRITE);
	r = m2 ? ibv_rereg_mr(m2, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, NULL, dst2 + 0, len,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : -100;
	check("rereg-move", r == 0 && m2->addr == dst2, "ibv_rereg_mr CHANGE_TRANSLATION returned 0");
	expect_status("rereg-move", write_status(p, src, 32, ms->lkey, (uintptr_t)dst2 + 100, m2->rkey),
		      IBV_WC_SUCCESS);
	check("rereg-move", dst2[100] == 'x' && dst2[132] == 0, "the 32 bytes arrived at the new translation");

	/* a type 1 window over dst, bound with ibv_bind_mw on the requester's QP */
	memset(dst, 0, len);
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw1) {
		perror("ibv_alloc_mw type 1");
		return 2;
	}
	uint32_t before = mw1->rkey;
	struct ibv_mw_bind bind = {.wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
				   .bind_info = {.mr = md, .addr = (uintptr_t)dst, .length = 1024,
						 .mw_access_flags = IBV_ACCESS_REMOTE_WRITE}};
	r = ibv_bind_mw(p.a, mw1, &bind);
	check("mw1-bind", r == 0 && mw1->rkey != before, "ibv_bind_mw returned 0 and the window has a new rkey");
	expect_status("mw1-bind", await_status(p.cq), IBV_WC_SUCCESS);
	expect_status("mw1-bind", write_status(p, src, 16, ms->lkey, (uintptr_t)dst + 8, mw1->rkey), IBV_WC_SUCCESS);
	check("mw1-bind", dst[8] == 'x' && dst[24] == 0, "the 16 bytes arrived through the window");

	/* a type 2 window, bound by a work request on the responder's QP, which it is then tied to */
	memset(dst, 0, len);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw2) {
		perror("ibv_alloc_mw type 2");
		return 2;
	}
	uint32_t rkey2 = ibv_inc_rkey(mw2->rkey);
	struct ibv_send_wr bw = {.wr_id = 21, .opcode = IBV_WR_BIND_MW};
	bw.bind_mw.mw = mw2;
	bw.bind_mw.rkey = rkey2;
	bw.bind_mw.bind_info = (struct ibv_mw_bind_info){.mr = md, .addr = (uintptr_t)dst, .length = 2048,
							  .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};
	r = post_signaled(p.b, &bw);
	check("mw2-bind", r == 0, "the BIND_MW work request was posted");
	expect_status("mw2-bind", r ? -r : await_status(p.cq), IBV_WC_SUCCESS);
	expect_status("mw2-bind", write_status(p, src, 16, ms->lkey, (uintptr_t)dst + 1000, rkey2), IBV_WC_SUCCESS);
	check("mw2-bind", dst[1000] == 'x', "the bytes arrived through the window");

	struct ibv_send_wr inv = {.wr_id = 22, .opcode = IBV_WR_LOCAL_INV};
	inv.invalidate_rkey = rkey2;
	r = post_signaled(p.b, &inv);
	expect_status("mw2-inv", r ? -r : await_status(p.cq), IBV_WC_SUCCESS);
	memset(dst, 0, len);
	expect_status("mw2-inv", write_status(p, src, 16, ms->lkey, (uintptr_t)dst + 1000, rkey2),
		      IBV_WC_REM_ACCESS_ERR);
	check("mw2-inv", dst[1000] == 0, "the target bytes are unchanged");

	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	r = ibv_query_qp(p.a, &qa, IBV_QP_STATE, &qia);
	check("qp-err", r == 0 && qa.qp_state == IBV_QPS_ERR, "the requester's QP is in ERR after the error completion");

	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	ibv_destroy_cq(p.cq);
	check("mw-dealloc", ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw2) == 0, "both windows deallocated");

	r = ibv_dealloc_pd(pd);
	check("pd-busy", r == EBUSY, "ibv_dealloc_pd of a PD with MRs: EBUSY");

	ibv_dereg_mr(m2);
	ibv_dereg_mr(md);
	ibv_dereg_mr(ms);
	check("pd-free", ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd once its MRs are gone");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
