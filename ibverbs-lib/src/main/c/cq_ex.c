/*
 * The extended CQ (ibv_create_cq_ex(3)): the same CQ of the server as ibv_create_cq, polled one completion at a time
 * with ibv_start_poll, ibv_next_poll and ibv_end_poll, whose fields the read_* accessors give. Only the fields the
 * program asked for in wc_flags may be read; the simulated device has no completion timestamps, VLANs, flow tags or
 * tag matching, so asking for them is refused with EOPNOTSUPP, as a provider refuses flags outside its
 * IBV_CREATE_CQ_SUP_WC_FLAGS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

static struct sim_cq *of(struct ibv_cq_ex *cq)
{
	return (struct sim_cq *)cq;
}

/* Takes the oldest completion into cur (reading the server's messages first when the ring is empty). */
static int take(struct sim_cq *c, int drive)
{
	rnicsim_lock();
	if (c->count == 0 && drive)
		rnicsim_drive(0);
	if (c->count == 0) {
		rnicsim_unlock();
		return ENOENT;
	}
	c->cur = c->ring[c->head];
	c->head = (c->head + 1) % c->cap;
	c->count--;
	rnicsim_unlock();
	c->cqx.status = c->cur.status;
	c->cqx.wr_id = c->cur.wr_id;
	return 0;
}

static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL; /* no comp_mask bit is defined */
	return take(of(cq), 1);
}

static int next_poll(struct ibv_cq_ex *cq)
{
	return take(of(cq), 1);
}

static void end_poll(struct ibv_cq_ex *cq)
{
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq) { return of(cq)->cur.opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *cq) { return of(cq)->cur.vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *cq) { return of(cq)->cur.byte_len; }
static __be32 read_imm_data(struct ibv_cq_ex *cq) { return of(cq)->cur.imm_data; }
static uint32_t read_qp_num(struct ibv_cq_ex *cq) { return of(cq)->cur.qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *cq) { return of(cq)->cur.src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *cq) { return of(cq)->cur.wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *cq) { return of(cq)->cur.slid; }
static uint8_t read_sl(struct ibv_cq_ex *cq) { return of(cq)->cur.sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq) { return of(cq)->cur.dlid_path_bits; }

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask || attr->flags) {
		errno = EOPNOTSUPP; /* parent domains and CQ creation flags are not simulated */
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	struct sim_cq *c = rnicsim_create_cq_on(ctx, (int)attr->cqe, attr->cq_context, attr->channel, attr->comp_vector);
	if (!c)
		return NULL;
	struct ibv_cq_ex *x = &c->cqx;
	x->start_poll = start_poll;
	x->next_poll = next_poll;
	x->end_poll = end_poll;
	x->read_opcode = read_opcode;
	x->read_vendor_err = read_vendor_err;
	x->read_wc_flags = read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		x->read_slid = read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		x->read_sl = read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = read_dlid_path_bits;
	return x;
}

void rnicsim_set_cq_ex_ops(struct verbs_context *vctx)
{
	vctx->create_cq_ex = create_cq_ex;
}
