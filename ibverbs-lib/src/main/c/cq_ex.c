/*
 * The extended CQ (ibv_create_cq_ex(3)): the same CQ of the server as ibv_create_cq, polled one completion at a time
 * with ibv_start_poll, ibv_next_poll and ibv_end_poll, whose fields the read_* accessors give. Only the fields the
 * program asked for in wc_flags may be read. Which wc_flags, comp_mask bits and creation flags the device takes is
 * its provider's (the server checks them with sim-nic's ExtendedCqs: mlx5 takes completion timestamps, CVLAN and
 * flow tags, rxe the standard flags only; a flag outside is EOPNOTSUPP). A completion timestamp is the time the
 * device wrote the CQE on the fabric's simulated clock: ibv_wc_read_completion_ts gives it in cycles of the
 * profile's hca_core_clock, ibv_wc_read_completion_wallclock_ns in ns. The simulated device has no VLANs and no flow
 * steering: read_cvlan and read_flow_tag give 0, as for a packet without a VLAN tag or a flow tag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	if (c->stamps)
		c->cur_stamp = c->stamps[c->head];
	if (c->tm_tags)
		c->cur_tm_tag = c->tm_tags[c->head];
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
	int e = take(of(cq), 1);
	if (e == ENOENT)
		rnicsim_idle(); /* a program spinning on an empty CQ lets the fabric server run */
	return e;
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
static uint16_t read_cvlan(struct ibv_cq_ex *cq) { return 0; }
static uint32_t read_flow_tag(struct ibv_cq_ex *cq) { return 0; }

/* ns of the device's clock in cycles of hca_core_clock (kHz), as sim-nic's ExtendedCqs.cycles counts them */
static uint64_t cycles(const struct sim_cq *c, uint64_t ns)
{
	return ((ns / 1000000) * c->clock_khz + (ns % 1000000) * c->clock_khz / 1000000) & c->ts_mask;
}

static uint64_t read_completion_ts(struct ibv_cq_ex *cq) { return cycles(of(cq), of(cq)->cur_stamp); }

/* the TMH's tag and app_ctx of a completion that reports a match (mlx5_cq_read_wc_tm_info reads them from the CQE);
 * 0 for the others */
static void read_tm_info(struct ibv_cq_ex *cq, struct ibv_wc_tm_info *tm_info)
{
	*tm_info = of(cq)->cur_tm_tag;
}
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cq) { return of(cq)->cur_stamp; }

/* The buffers a CQ of a parent domain takes from its allocator (mlx5 create_cq: the CQE ring of
 * align_queue_size(cqe + 1) entries of 64 bytes, MLX5DV_RES_TYPE_CQ; then the doorbell record) */
#define CQE_BYTES 64
#define RES_TYPE_CQ ((uint64_t)RDMA_DRIVER_MLX5 << 32 | 5)

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
	struct wire_cqex_caps caps;
	int e = rnicsim_cq_caps(ctx, &caps);
	if (e) {
		errno = e;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = rnicsim_refuse("ibv_create_cq_ex", EINVAL, "cqe=%u is above 2^31 - 1, and so above any "
				       "max_cqe (mlx5_create_cq: EINVAL); fix: ask for 1 to max_cqe entries "
				       "(ibv_query_device)", attr->cqe);
		return NULL;
	}
	int refused = rnicsim_alloc_type_refuses(ctx, "MLX_CQ_ALLOC_TYPE");
	if (refused) {
		errno = refused;
		return NULL;
	}
	int pd_given = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) != 0;
	struct wire_create_cq_ex req = {.ctx = rnicsim_ctx_handle(ctx),
					.cqe = attr->cqe,
					.wc_flags = attr->wc_flags,
					.comp_mask = attr->comp_mask,
					.flags = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) ? attr->flags : 0,
					.not_parent_domain = pd_given && !rnicsim_is_parent_domain(attr->parent_domain),
					.comp_vector = attr->comp_vector};
	/* the provider allocates the ring before it asks the kernel: a parent domain's allocator is called first */
	void *bufs = NULL;
	if (pd_given && !req.not_parent_domain && (caps.features & WIRE_CQEX_DOMAINS)) {
		size_t entries = 1;
		while (entries < (size_t)attr->cqe + 1)
			entries <<= 1;
		bufs = rnicsim_pd_bufs_get(attr->parent_domain, RES_TYPE_CQ, entries * CQE_BYTES, &e);
		if (e) {
			errno = e;
			return NULL;
		}
	}
	struct wire_create_cq resp = {0};
	e = rnicsim_rpc(OP_CREATE_CQ_EX, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	struct sim_cq *c = e ? NULL : rnicsim_cq_new(ctx, resp.ctx, resp.cqe, attr->cq_context, attr->channel);
	if (!c) {
		rnicsim_pd_bufs_put(bufs);
		errno = e ? e : ENOMEM;
		return NULL;
	}
	rnicsim_pd_bufs_bind(bufs, c);
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
	if (attr->wc_flags & IBV_WC_EX_WITH_CVLAN)
		x->read_cvlan = read_cvlan;
	if (attr->wc_flags & IBV_WC_EX_WITH_FLOW_TAG)
		x->read_flow_tag = read_flow_tag;
	if (attr->wc_flags & IBV_WC_EX_WITH_TM_INFO) {
		c->tm_tags = calloc(c->cap, sizeof(*c->tm_tags));
		x->read_tm_info = read_tm_info;
	}
	if (attr->wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)) {
		c->clock_khz = caps.hca_core_clock;
		c->ts_mask = caps.timestamp_mask;
		c->stamps = calloc(c->cap, sizeof(*c->stamps));
		if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
			x->read_completion_ts = read_completion_ts;
		if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			x->read_completion_wallclock_ns = read_completion_wallclock_ns;
	}
	return x;
}

void rnicsim_set_cq_ex_ops(struct verbs_context *vctx)
{
	vctx->create_cq_ex = create_cq_ex;
	rnicsim_set_extended_ops(vctx);
}
