/*
 * Tag matching (ibv_create_srq_ex(3) of type IBV_SRQT_TM, ibv_post_srq_ops(3)) on the first device, with what mlx5
 * and the kernel answer, checked. Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when
 * every case got the expected answer.
 *
 *   caps        ibv_query_device_ex's tm_caps                                  IBV_TM_CAP_RC, max_sge 1, rndv 64;
 *               (a device without tag matching: all 0, and a TM SRQ is        EOPNOTSUPP or EINVAL, nothing else runs)
 *   create-bad  a TM SRQ on a plain CQ; max_num_tags above tm_caps               EINVAL each
 *   ops-bad     ibv_post_srq_ops on a basic SRQ; an unknown opcode; a 4th tag    EINVAL; EINVAL; ENOMEM, bad_op that one
 *               on a list of 3
 *   add         three tags                                                     handles 0, 1, 2; IBV_WC_TM_ADD each
 *   eager       a SEND with TMH EAGER of a listed tag                          IBV_WC_TM_RECV, MATCH|DATA_VALID, the
 *                                                                              tag, the payload after the TMH there
 *   unexpected  a SEND of a tag not listed                                     IBV_WC_TM_RECV without MATCH, the
 *                                                                              ordinary receive, the whole message
 *   sync        IBV_WR_TAG_SYNC with the count handled                          IBV_WC_TM_SYNC
 *   no-tag      a SEND with TMH NO_TAG                                         IBV_WC_TM_NO_TAG, ordinary receive
 *   del         DEL of a listed tag; DEL of a consumed one                     IBV_WC_SUCCESS; IBV_WC_TM_ERR
 *   eager-no-recv  a SEND of a listed tag while the SRQ has no ordinary        IBV_WC_TM_RECV, MATCH|DATA_VALID (a
 *               receive                                                        match takes no ordinary receive)
 *   rndv        a SEND with TMH RNDV and an RVH naming the sender's buffer,    MATCH, then DATA_VALID with the bytes
 *               no ordinary receive posted                                     read; a receive completes at the sender
 *                                                                              with a FIN; a receive posted after it
 *                                                                              takes the next NO_TAG message
 *
 * Build: gcc -g tag_matching.c -libverbs
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checks.h"

#define MSG 256
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq_ex *scq, *rcq; /* the sender's, the TM SRQ's */
static struct ibv_srq *srq;
static struct ibv_qp *snd, *rcv;
static char *sbuf, *rbuf, *tbuf;
static struct ibv_mr *smr, *rmr, *tmr;

struct got {
	int ok;
	uint64_t wr_id;
	int status, opcode;
	unsigned flags;
	uint32_t byte_len;
	uint64_t tag;
	uint32_t priv;
};

static struct got poll_one(struct ibv_cq_ex *cq)
{
	struct got g = {0};
	struct ibv_poll_cq_attr attr = {0};
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int e;
	while ((e = ibv_start_poll(cq, &attr)) == ENOENT) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			return g;
	}
	if (e)
		return g;
	g.ok = 1;
	g.wr_id = cq->wr_id;
	g.status = cq->status;
	g.opcode = ibv_wc_read_opcode(cq);
	g.flags = ibv_wc_read_wc_flags(cq);
	g.byte_len = ibv_wc_read_byte_len(cq);
	if (cq == rcq) {
		struct ibv_wc_tm_info info;
		ibv_wc_read_tm_info(cq, &info);
		g.tag = info.tag;
		g.priv = info.priv;
	}
	ibv_end_poll(cq);
	return g;
}

static int post_ops(struct ibv_ops_wr *wr, struct ibv_ops_wr **bad)
{
	return ibv_post_srq_ops(srq, wr, bad);
}

static int add_tag(uint64_t wr_id, uint64_t tag, char *buf, uint32_t len, uint32_t *handle)
{
	struct ibv_sge sge = {(uintptr_t)buf, len, tmr->lkey};
	struct ibv_ops_wr wr = {.wr_id = wr_id, .opcode = IBV_WR_TAG_ADD, .flags = IBV_OPS_SIGNALED};
	wr.tm.add.recv_wr_id = 1000 + wr_id;
	wr.tm.add.sg_list = &sge;
	wr.tm.add.num_sge = 1;
	wr.tm.add.tag = tag;
	wr.tm.add.mask = 0xffff;
	struct ibv_ops_wr *bad;
	int e = post_ops(&wr, &bad);
	*handle = wr.tm.handle;
	return e;
}

static void post_recv(uint64_t wr_id)
{
	struct ibv_sge sge = {(uintptr_t)rbuf, MSG, rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;
	if (ibv_post_srq_recv(srq, &wr, &bad))
		perror("ibv_post_srq_recv");
}

static void send_tmh(uint8_t op, uint64_t tag, uint32_t len)
{
	struct ibv_tmh *h = (struct ibv_tmh *)sbuf;
	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->app_ctx = htobe32(0x5a5a);
	h->tag = htobe64(tag);
	struct ibv_sge sge = {(uintptr_t)sbuf, len, smr->lkey};
	struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	if (ibv_post_send(snd, &wr, &bad))
		perror("ibv_post_send");
	struct got s = poll_one(scq);
	if (!s.ok || s.status != IBV_WC_SUCCESS)
		fprintf(stderr, "send completion: ok %d status %d\n", s.ok, s.status);
}

static struct ibv_cq_ex *cq_ex(void)
{
	struct ibv_cq_init_attr_ex a = {.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO};
	return ibv_create_cq_ex(ctx, &a);
}

static struct ibv_srq *tm_srq(struct ibv_cq *cq, uint32_t tags)
{
	struct ibv_srq_init_attr_ex a = {.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
						      IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
					 .srq_type = IBV_SRQT_TM,
					 .pd = pd,
					 .cq = cq};
	a.attr.max_wr = 16;
	a.attr.max_sge = 1;
	a.tm_cap.max_num_tags = tags;
	a.tm_cap.max_ops = 8;
	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *rc_qp(struct ibv_cq_ex *cq, struct ibv_srq *s)
{
	struct ibv_qp_init_attr a = {.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq), .srq = s,
				     .qp_type = IBV_QPT_RC};
	a.cap.max_send_wr = s ? 0 : 8;
	a.cap.max_send_sge = s ? 0 : 1;
	a.cap.max_recv_wr = s ? 0 : 8;
	a.cap.max_recv_sge = s ? 0 : 1;
	return ibv_create_qp(pd, &a);
}

static void bad_calls(const struct ibv_device_attr_ex *ax)
{
	struct ibv_cq *plain = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	errno = 0;
	check("create-bad", !tm_srq(plain, 3) && errno == EINVAL, "a TM SRQ on a plain CQ: NULL, EINVAL");
	errno = 0;
	check("create-bad", !tm_srq(ibv_cq_ex_to_cq(rcq), ax->tm_caps.max_num_tags + 1) && errno == EINVAL,
	      "max_num_tags above tm_caps.max_num_tags: NULL, EINVAL");
	ibv_destroy_cq(plain);

	struct ibv_srq_init_attr ba = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *basic = ibv_create_srq(pd, &ba);
	struct ibv_ops_wr sync = {.wr_id = 1, .opcode = IBV_WR_TAG_SYNC}, *bad = NULL;
	check("ops-bad", ibv_post_srq_ops(basic, &sync, &bad) == EINVAL && bad == &sync,
	      "ibv_post_srq_ops on a basic SRQ: EINVAL, bad_op the first");
	ibv_destroy_srq(basic);
	struct ibv_ops_wr odd = {.wr_id = 1, .opcode = (enum ibv_ops_wr_opcode)7};
	bad = NULL;
	check("ops-bad", post_ops(&odd, &bad) == EINVAL && bad == &odd, "an unknown opcode: EINVAL, bad_op it");
}

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	struct ibv_device_attr_ex ax;
	if (ibv_query_device_ex(ctx, NULL, &ax)) {
		perror("ibv_query_device_ex");
		return 2;
	}
	printf("tm_caps flags %u max_num_tags %u max_ops %u max_sge %u max_rndv_hdr_size %u\n", ax.tm_caps.flags,
	       ax.tm_caps.max_num_tags, ax.tm_caps.max_ops, ax.tm_caps.max_sge, ax.tm_caps.max_rndv_hdr_size);
	errno = 0;
	rcq = cq_ex();
	if (!(ax.tm_caps.flags & IBV_TM_CAP_RC)) {
		/* mlx5 takes IBV_WC_EX_WITH_TM_INFO on any device; rxe's provider refuses it */
		int cq_errno = errno;
		struct ibv_cq_init_attr_ex std = {.cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS};
		struct ibv_cq_ex *c = rcq ? rcq : ibv_create_cq_ex(ctx, &std);
		errno = 0;
		struct ibv_srq *s = c ? tm_srq(ibv_cq_ex_to_cq(c), 3) : NULL;
		int e = errno;
		check("caps", !s && ax.tm_caps.max_num_tags == 0 && (rcq ? e == EINVAL : e == EOPNOTSUPP) &&
				      (rcq || cq_errno == EOPNOTSUPP),
		      "no tag matching: tm_caps 0, and ibv_create_srq_ex of type TM NULL (EINVAL on mlx5, EOPNOTSUPP "
		      "elsewhere)");
		return failures ? 1 : 0;
	}
	check("caps", ax.tm_caps.max_num_tags >= 3 && ax.tm_caps.max_sge == 1 && ax.tm_caps.max_rndv_hdr_size == 64,
	      "IBV_TM_CAP_RC, max_sge 1, max_rndv_hdr_size 64");
	scq = cq_ex();
	srq = tm_srq(ibv_cq_ex_to_cq(rcq), 3);
	sbuf = calloc(1, 4096);
	rbuf = calloc(1, MSG);
	tbuf = calloc(1, 8 * MSG);
	smr = ibv_reg_mr(pd, sbuf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	rmr = ibv_reg_mr(pd, rbuf, MSG, IBV_ACCESS_LOCAL_WRITE);
	tmr = ibv_reg_mr(pd, tbuf, 8 * MSG, IBV_ACCESS_LOCAL_WRITE);
	snd = rc_qp(scq, NULL);
	rcv = rc_qp(rcq, srq);
	if (!srq || !snd || !rcv || !smr || !rmr || !tmr || connect_qp(snd, rcv->qp_num) ||
	    connect_qp(rcv, snd->qp_num)) {
		perror("setting up");
		return 2;
	}
	bad_calls(&ax);

	uint32_t h[4];
	int e = add_tag(1, 7, tbuf + 4 * MSG, 4 * MSG, &h[0]) | add_tag(2, 8, tbuf + MSG, MSG, &h[1]) |
		add_tag(3, 9, tbuf + 2 * MSG, MSG, &h[2]);
	struct got a1 = poll_one(rcq), a2 = poll_one(rcq), a3 = poll_one(rcq);
	check("add", !e && h[0] == 0 && h[1] == 1 && h[2] == 2 && a1.opcode == IBV_WC_TM_ADD && a1.wr_id == 1 &&
			     a3.wr_id == 3 && a2.status == IBV_WC_SUCCESS && a1.flags == 0,
	      "handles 0, 1, 2; IBV_WC_TM_ADD with each wr_id");
	struct ibv_ops_wr more = {.wr_id = 4, .opcode = IBV_WR_TAG_ADD}, *bad = NULL;
	check("ops-bad", post_ops(&more, &bad) == ENOMEM && bad == &more, "a 4th tag on a list of 3: ENOMEM");

	post_recv(500);
	post_recv(501);
	for (int i = 0; i < MSG; i++)
		sbuf[i] = (char)i;
	send_tmh(IBV_TMH_EAGER, 8, MSG);
	struct got m = poll_one(rcq);
	check("eager", m.ok && m.opcode == IBV_WC_TM_RECV && m.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) &&
			       m.wr_id == 1002 && m.tag == 8 && m.priv == 0x5a5a && m.byte_len == MSG - 16 &&
			       !memcmp(tbuf + MSG, sbuf + 16, MSG - 16),
	      "IBV_WC_TM_RECV, MATCH|DATA_VALID, recv_wr_id, tag 8 and app_ctx; the payload after the TMH in the tag's "
	      "buffer");

	send_tmh(IBV_TMH_EAGER, 0x1234, MSG);
	struct got u = poll_one(rcq);
	check("unexpected", u.ok && u.opcode == IBV_WC_TM_RECV && u.flags == 0 && u.wr_id == 500 && u.tag == 0 &&
				    u.priv == 0 &&
				    !memcmp(rbuf, sbuf, MSG),
	      "IBV_WC_TM_RECV without MATCH on the ordinary receive; the whole message, TMH included");
	struct ibv_ops_wr sync = {.wr_id = 27, .opcode = IBV_WR_TAG_SYNC, .flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC};
	sync.tm.unexpected_cnt = 1;
	e = post_ops(&sync, &bad);
	struct got sy = poll_one(rcq);
	check("sync", !e && sy.opcode == IBV_WC_TM_SYNC && sy.wr_id == 27 && sy.status == IBV_WC_SUCCESS,
	      "IBV_WC_TM_SYNC with its wr_id");

	send_tmh(IBV_TMH_NO_TAG, 7, 64);
	struct got n = poll_one(rcq);
	check("no-tag", n.ok && n.opcode == IBV_WC_TM_NO_TAG && n.wr_id == 501 && n.byte_len == 64,
	      "IBV_WC_TM_NO_TAG on the ordinary receive");

	struct ibv_ops_wr del = {.wr_id = 40, .opcode = IBV_WR_TAG_DEL, .flags = IBV_OPS_SIGNALED};
	del.tm.handle = h[2];
	e = post_ops(&del, &bad);
	struct got d1 = poll_one(rcq);
	del.wr_id = 41;
	del.tm.handle = h[1]; /* consumed by the eager message */
	e |= post_ops(&del, &bad);
	struct got d2 = poll_one(rcq);
	check("del", !e && d1.opcode == IBV_WC_TM_DEL && d1.status == IBV_WC_SUCCESS && d2.wr_id == 41 &&
			     d2.status == IBV_WC_TM_ERR,
	      "DEL of a listed tag: IBV_WC_SUCCESS; of a consumed one: IBV_WC_TM_ERR");

	/* the SRQ has no ordinary receive left (500 and 501 are consumed): a message that matches a listed tag needs
	 * none, the device matches it as it arrives */
	e = add_tag(5, 10, tbuf + 2 * MSG, MSG, &h[3]);
	struct got a5 = poll_one(rcq);
	for (int i = 0; i < MSG; i++)
		sbuf[i] = (char)(255 - i);
	send_tmh(IBV_TMH_EAGER, 10, 128);
	struct got m2 = poll_one(rcq);
	check("eager-no-recv", !e && a5.wr_id == 5 && m2.ok && m2.opcode == IBV_WC_TM_RECV &&
				       m2.flags == (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID) && m2.wr_id == 1005 &&
				       m2.tag == 10 && m2.byte_len == 128 - 16 && !memcmp(tbuf + 2 * MSG, sbuf + 16, 128 - 16),
	      "with no ordinary receive posted, a SEND matching a listed tag completes: IBV_WC_TM_RECV, "
	      "MATCH|DATA_VALID, the payload in the tag's buffer");

	/* rendezvous: the data is 1000 bytes at offset 1024 of the sender's buffer; still no ordinary receive posted:
	 * the NO_TAG message after it finds the one posted then */
	for (int i = 0; i < 1000; i++)
		sbuf[1024 + i] = (char)(i * 7);
	struct ibv_recv_wr fin_wr = {.wr_id = 77};
	struct ibv_sge fin_sge = {(uintptr_t)(sbuf + 3072), 64, smr->lkey};
	fin_wr.sg_list = &fin_sge;
	fin_wr.num_sge = 1;
	struct ibv_recv_wr *rbad;
	ibv_post_recv(snd, &fin_wr, &rbad);
	struct ibv_rvh *rvh = (struct ibv_rvh *)(sbuf + sizeof(struct ibv_tmh));
	rvh->va = htobe64((uintptr_t)(sbuf + 1024));
	rvh->rkey = htobe32(smr->rkey);
	rvh->len = htobe32(1000);
	struct ibv_tmh *th = (struct ibv_tmh *)sbuf;
	th->opcode = IBV_TMH_RNDV;
	th->tag = htobe64(7);
	struct ibv_sge sge = {(uintptr_t)sbuf, 64, smr->lkey};
	struct ibv_send_wr wr = {.wr_id = 8, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *sbad;
	ibv_post_send(snd, &wr, &sbad);
	struct got r1 = poll_one(rcq), r2 = poll_one(rcq);
	struct got s1 = poll_one(scq), s2 = poll_one(scq);
	struct got fin = s1.opcode == IBV_WC_RECV ? s1 : s2;
	check("rndv", r1.opcode == IBV_WC_TM_RECV && r1.flags == IBV_WC_TM_MATCH && r1.tag == 7 && r1.wr_id == 1001 &&
			      r2.flags == IBV_WC_TM_DATA_VALID && r2.status == IBV_WC_SUCCESS && r2.byte_len == 1000 &&
			      !memcmp(tbuf + 4 * MSG, sbuf + 1024, 1000),
	      "MATCH with the tag, then DATA_VALID: the 1000 bytes the RVH names read into the tag's buffer");
	check("rndv", fin.ok && fin.opcode == IBV_WC_RECV && fin.wr_id == 77 && sbuf[3072] == IBV_TMH_FIN,
	      "the sender's receive completes with a TMH of opcode IBV_TMH_FIN");
	post_recv(502);
	send_tmh(IBV_TMH_NO_TAG, 7, 32);
	struct got after = poll_one(rcq);
	check("rndv", after.ok && after.opcode == IBV_WC_TM_NO_TAG && after.wr_id == 502,
	      "a matched message takes no ordinary receive: the next NO_TAG message finds it");

	ibv_destroy_qp(rcv);
	ibv_destroy_qp(snd);
	check("destroy", ibv_destroy_srq(srq) == 0, "the TM SRQ once its QP is gone: 0");
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(tmr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(scq));
	ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
