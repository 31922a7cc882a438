/*
 * The data path: ibv_post_send and ibv_post_recv ring the fabric server's doorbell with one message each (no
 * answer is awaited, as a provider writes the WQE and rings the doorbell); ibv_poll_cq takes completions from a
 * ring in this process that the server's WC messages fill. The errno a provider gives at post time (QP state, SGE
 * count, inline size, a full send queue) is checked here, with the limits the device granted at ibv_create_qp.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

static char *msg;
static size_t msg_cap;

static void reserve(size_t need)
{
	if (need <= msg_cap)
		return;
	size_t n = msg_cap ? msg_cap : 65536;
	while (n < need)
		n *= 2;
	msg = realloc(msg, n);
	if (!msg)
		abort();
	msg_cap = n;
}

static int supported(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_BIND_MW:
		return 1;
	default:
		return 0;
	}
}

static int check_send(struct sim_qp *q, struct ibv_send_wr *wr, unsigned queued)
{
	if (q->qpx.qp_base.state < IBV_QPS_RTS && q->qpx.qp_base.state != IBV_QPS_ERR)
		return EINVAL; /* a send queue takes work from RTS on */
	if (wr->opcode == IBV_WR_ATOMIC_WRITE && !(q->post_rules & WIRE_POST_ATOMIC_WRITE))
		return EOPNOTSUPP; /* only an RC QP of a device with IBV_DEVICE_ATOMIC_WRITE (rxe) executes it */
	if (!supported(wr->opcode) && wr->opcode != IBV_WR_ATOMIC_WRITE)
		return EINVAL;
	/* mlx5 compares num_sge with its int max_gs: a negative count passes and no SGE is read (post_send sends it
	 * with none); librxe's unsigned max_sge makes it huge: EINVAL */
	if (wr->num_sge < 0 && !(q->post_rules & WIRE_POST_SGE_COUNT_SIGNED))
		return EINVAL;
	if (wr->num_sge > 0 && (unsigned)wr->num_sge > q->cap.max_send_sge)
		return (q->post_rules & WIRE_POST_SGE_OVERFLOW_ENOMEM) ? ENOMEM : EINVAL; /* mlx5: ENOMEM; rxe: EINVAL */
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		if ((q->post_rules & WIRE_POST_ATOMIC_ALIGNMENT) && (wr->wr.atomic.remote_addr & 7))
			return EINVAL;
		if (q->post_rules & WIRE_POST_ATOMICS_DISABLED)
			return EOPNOTSUPP;
	}
	if (q->outstanding_sends + queued >= q->cap.max_send_wr)
		return ENOMEM; /* send queue full: the provider's work queue overflow */
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t len = 0;
		for (int i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > q->cap.max_inline_data)
			return q->cap.pad ? (int)q->cap.pad : EINVAL; /* ENOMEM on mlx5, EINVAL on rxe */
	}
	return 0;
}

/* Builds the doorbell of a chain of send work requests and rings it; *carry_fault when the send buffers of the
 * requests that carry their bytes could not be read (nothing was sent: ring again without carrying). */
static int post_send(struct sim_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, int carry,
		     int *carry_fault)
{
	int e = 0;
	size_t off = sizeof(struct wire_hdr) + sizeof(struct wire_post);
	unsigned count = 0;
	struct rnicsim_carry carried = {.n = 0};
	for (struct ibv_send_wr *posted = wr; posted; posted = posted->next) {
		e = check_send(q, posted, count);
		if (e) {
			*bad_wr = posted;
			break;
		}
		/* a negative num_sge that check_send let through (mlx5) is a request without SGEs */
		struct ibv_send_wr none;
		struct ibv_send_wr *w = posted;
		if (posted->num_sge < 0) {
			none = *posted;
			none.num_sge = 0;
			w = &none;
		}
		uint32_t inline_len = 0, carry_len = 0;
		if (w->send_flags & IBV_SEND_INLINE)
			for (int i = 0; i < w->num_sge; i++)
				inline_len += w->sg_list[i].length;
		else if (carry)
			carry_len = rnicsim_carry_len(w, off, &carried);
		reserve(off + sizeof(struct wire_send_wr) + w->num_sge * sizeof(struct wire_sge) + inline_len + carry_len +
			8 + sizeof(struct wire_xrc_wr));
		struct wire_send_wr *s = (struct wire_send_wr *)(msg + off);
		memset(s, 0, sizeof(*s));
		s->wr_id = w->wr_id;
		s->opcode = w->opcode;
		s->send_flags = w->send_flags | (q->sq_sig_all ? IBV_SEND_SIGNALED : 0);
		s->num_sge = w->num_sge;
		s->imm_data = w->imm_data;
		s->inline_len = inline_len;
		if (carry_len) {
			s->send_flags |= WIRE_SEND_CARRIED;
			s->inline_len = carry_len;
		}
		if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
		    w->opcode == IBV_WR_ATOMIC_WRITE) {
			s->remote_addr = w->wr.atomic.remote_addr;
			s->rkey = w->wr.atomic.rkey;
			s->compare_add = w->wr.atomic.compare_add;
			s->swap = w->wr.atomic.swap;
		} else if (w->opcode == IBV_WR_BIND_MW) {
			rnicsim_wire_bind(w, s);
		} else if (q->qpx.qp_base.qp_type == IBV_QPT_UD) {
			s->remote_addr = rnicsim_ah_handle(w->wr.ud.ah);
			s->compare_add = w->wr.ud.remote_qpn;
			s->rkey = w->wr.ud.remote_qkey;
		} else {
			s->remote_addr = w->wr.rdma.remote_addr;
			s->rkey = w->wr.rdma.rkey;
		}
		off += sizeof(*s);
		for (int i = 0; i < w->num_sge; i++) {
			struct wire_sge *g = (struct wire_sge *)(msg + off);
			g->addr = w->sg_list[i].addr;
			g->length = w->sg_list[i].length;
			g->lkey = w->sg_list[i].lkey;
			off += sizeof(*g);
		}
		if (inline_len) {
			/* inline data is copied at post: the buffer may be reused as soon as the verb returns */
			for (int i = 0; i < w->num_sge; i++) {
				memcpy(msg + off, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
				off += w->sg_list[i].length;
			}
			while (off % 8)
				msg[off++] = 0;
		} else if (carry_len) {
			/* the doorbell's writev reads these bytes from the send buffers themselves */
			rnicsim_carry_add(&carried, off, w);
			off += carry_len;
			while (off % 8)
				msg[off++] = 0;
		}
		if (q->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND) {
			/* the XRC SRQ at the target that takes this request (the XRCETH) */
			struct wire_xrc_wr *x = (struct wire_xrc_wr *)(msg + off);
			x->remote_srqn = w->qp_type.xrc.remote_srqn;
			x->pad = 0;
			off += sizeof(*x);
		}
		count++;
	}
	if (count) {
		struct wire_post *p = (struct wire_post *)(msg + sizeof(struct wire_hdr));
		p->qp = q->handle;
		p->count = count;
		struct iovec iov[2] = {{msg, sizeof(struct wire_hdr)}, {msg + sizeof(struct wire_hdr),
									off - sizeof(struct wire_hdr)}};
		int we = carried.n ? rnicsim_carry_doorbell(OP_POST_SEND, msg, off, &carried)
				   : rnicsim_doorbell(OP_POST_SEND, iov, 2);
		if (we == EFAULT && carried.n) {
			*carry_fault = 1; /* a send buffer is not mapped: the device, not this library, is to find out */
			return e;
		}
		if (we && !e) {
			e = we;
			*bad_wr = wr;
		} else {
			q->outstanding_sends += count;
			rnicsim_sends_posted(count);
		}
	}
	return e;
}

int rnicsim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	int carry_fault = 0;
	rnicsim_lock();
	int e = post_send(q, wr, bad_wr, 1, &carry_fault);
	if (carry_fault)
		e = post_send(q, wr, bad_wr, 0, &carry_fault);
	rnicsim_unlock();
	return e;
}

int rnicsim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	int e = 0;
	rnicsim_lock();
	size_t off = sizeof(struct wire_hdr) + sizeof(struct wire_post);
	unsigned count = 0;
	for (struct ibv_recv_wr *w = wr; w; w = w->next) {
		/* rxe's and mlx5's post_recv: a QP in RESET takes no receive (EINVAL, as rdma-core's tests/utils.py
		 * post_rq_state_bad_flow expects), more SGEs than max_recv_sge are EINVAL, and a receive queue holding
		 * max_recv_wr receives not yet completed overflows (ENOMEM: mlx5_wq_overflow, rxe's queue_full) */
		/* neither XRC QP has a receive queue (uverbs create_qp gives XRC_INI max_recv_wr 0, XRC_TGT none):
		 * past RESET, mlx5_post_recv finds its 0 entries full before it counts SGEs (mlx5_wq_overflow):
		 * ENOMEM, as the model answers (XrcRules.recvRefusal); rxe has no XRC QPs */
		if ((q->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND || q->qpx.qp_base.qp_type == IBV_QPT_XRC_RECV) &&
		    q->qpx.qp_base.state != IBV_QPS_RESET) {
			e = ENOMEM;
			*bad_wr = w;
			break;
		}
		/* a negative num_sge: mlx5_post_recv's signed compare lets it through with no SGE, librxe's unsigned
		 * max_sge refuses it */
		if ((w->num_sge > 0 && (unsigned)w->num_sge > q->cap.max_recv_sge) ||
		    (w->num_sge < 0 && !(q->post_rules & WIRE_POST_SGE_COUNT_SIGNED)) ||
		    q->qpx.qp_base.state == IBV_QPS_RESET) {
			e = EINVAL;
			*bad_wr = w;
			break;
		}
		if (q->qpx.qp_base.srq) { /* its receives come from the SRQ: mlx4/mlx5 gave it 0 entries, rxe refuses */
			e = (q->post_rules & WIRE_POST_RECV_SRQ_ENOMEM) ? ENOMEM : EINVAL;
			*bad_wr = w;
			break;
		}
		if (!q->qpx.qp_base.srq && q->outstanding_recvs + count >= q->cap.max_recv_wr) {
			e = ENOMEM;
			*bad_wr = w;
			break;
		}
		int nsge = w->num_sge < 0 ? 0 : w->num_sge;
		reserve(off + sizeof(struct wire_recv_wr) + nsge * sizeof(struct wire_sge));
		struct wire_recv_wr *r = (struct wire_recv_wr *)(msg + off);
		r->wr_id = w->wr_id;
		r->num_sge = nsge;
		r->pad = 0;
		off += sizeof(*r);
		for (int i = 0; i < nsge; i++) {
			struct wire_sge *g = (struct wire_sge *)(msg + off);
			g->addr = w->sg_list[i].addr;
			g->length = w->sg_list[i].length;
			g->lkey = w->sg_list[i].lkey;
			off += sizeof(*g);
		}
		count++;
	}
	if (count) {
		struct wire_post *p = (struct wire_post *)(msg + sizeof(struct wire_hdr));
		p->qp = q->handle;
		p->count = count;
		struct iovec iov[2] = {{msg, sizeof(struct wire_hdr)}, {msg + sizeof(struct wire_hdr),
									off - sizeof(struct wire_hdr)}};
		int we = rnicsim_doorbell(OP_POST_RECV, iov, 2);
		if (we && !e) {
			e = we;
			*bad_wr = wr;
		}
		if (!we)
			q->outstanding_recvs += count;
	}
	rnicsim_unlock();
	return e;
}

void rnicsim_cq_push(struct sim_cq *cq, const struct wire_wc *w)
{
	if (cq->count == cq->cap) {
		struct ibv_wc *n = calloc(cq->cap * 2, sizeof(*n));
		uint64_t *ns = cq->stamps ? calloc(cq->cap * 2, sizeof(*ns)) : NULL;
		struct ibv_wc_tm_info *nt = cq->tm_tags ? calloc(cq->cap * 2, sizeof(*nt)) : NULL;
		for (unsigned i = 0; i < cq->count; i++) {
			n[i] = cq->ring[(cq->head + i) % cq->cap];
			if (ns)
				ns[i] = cq->stamps[(cq->head + i) % cq->cap];
			if (nt)
				nt[i] = cq->tm_tags[(cq->head + i) % cq->cap];
		}
		free(cq->ring);
		free(cq->stamps);
		free(cq->tm_tags);
		cq->ring = n;
		cq->stamps = ns;
		cq->tm_tags = nt;
		cq->head = 0;
		cq->cap *= 2;
	}
	if (cq->stamps)
		cq->stamps[(cq->head + cq->count) % cq->cap] = w->time_ns;
	if (cq->tm_tags)
		memset(&cq->tm_tags[(cq->head + cq->count) % cq->cap], 0, sizeof(*cq->tm_tags)); /* TM_WC sets it (tm.c) */
	struct ibv_wc *wc = &cq->ring[(cq->head + cq->count) % cq->cap];
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = w->wr_id;
	wc->status = w->status;
	wc->opcode = w->opcode;
	wc->vendor_err = w->vendor_err;
	wc->byte_len = w->byte_len;
	wc->imm_data = w->imm_data;
	wc->qp_num = w->qp_num;
	wc->src_qp = w->src_qp;
	wc->wc_flags = w->wc_flags;
	cq->count++;
	if (cq->armed && cq->cq.channel) {
		struct sim_channel *c = (struct sim_channel *)cq->cq.channel;
		cq->armed = 0;
		if (c->events_len == c->events_cap) {
			c->events_cap = c->events_cap ? c->events_cap * 2 : 16;
			c->events = realloc(c->events, c->events_cap * sizeof(*c->events));
		}
		c->events[c->events_len++] = cq;
		uint64_t one = 1;
		if (write(c->channel.fd, &one, sizeof(one)) < 0) {
			/* a full eventfd counter still leaves the event queued */
		}
	}
}

int rnicsim_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct sim_cq *c = (struct sim_cq *)cq;
	rnicsim_lock();
	if (c->count == 0)
		rnicsim_drive(0);
	int n = 0;
	while (n < num_entries && c->count > 0) {
		wc[n++] = c->ring[c->head];
		c->head = (c->head + 1) % c->cap;
		c->count--;
	}
	rnicsim_unlock();
	if (n == 0)
		rnicsim_idle(); /* a program spinning on an empty CQ lets the fabric server run */
	return n;
}

int rnicsim_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct sim_cq *c = (struct sim_cq *)cq;
	rnicsim_lock();
	c->armed = 1;
	c->solicited_only = solicited_only;
	rnicsim_unlock();
	return 0;
}

/* ibv_wr_* (the extended post API perftest uses): work requests are collected and posted by ibv_wr_complete */

static struct sim_qp *of(struct ibv_qp_ex *qpx)
{
	return (struct sim_qp *)qpx;
}

static struct ibv_send_wr *next_wr(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct sim_qp *q = of(qpx);
	if (q->nwr == QPX_MAX_WR) {
		q->qpx_error = ENOMEM;
		return NULL;
	}
	unsigned i = q->nwr++;
	struct ibv_send_wr *w = &q->wrs[i];
	memset(w, 0, sizeof(*w));
	w->wr_id = qpx->wr_id;
	w->send_flags = qpx->wr_flags;
	w->opcode = op;
	w->sg_list = q->sges[i];
	return w;
}

static struct ibv_send_wr *last_wr(struct ibv_qp_ex *qpx)
{
	struct sim_qp *q = of(qpx);
	return q->nwr ? &q->wrs[q->nwr - 1] : NULL;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	of(qpx)->nwr = 0;
	of(qpx)->qpx_error = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct sim_qp *q = of(qpx);
	int e = q->qpx_error;
	if (!e && q->nwr) {
		for (unsigned i = 0; i + 1 < q->nwr; i++)
			q->wrs[i].next = &q->wrs[i + 1];
		q->wrs[q->nwr - 1].next = NULL;
		struct ibv_send_wr *bad;
		e = rnicsim_post_send(&qpx->qp_base, &q->wrs[0], &bad);
	}
	q->nwr = 0;
	q->qpx_error = 0;
	return e;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	of(qpx)->nwr = 0;
	of(qpx)->qpx_error = 0;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_RDMA_WRITE);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
	}
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
		w->imm_data = imm;
	}
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_RDMA_READ);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
	}
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	next_wr(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_SEND_WITH_IMM);
	if (w)
		w->imm_data = imm;
}

static void wr_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);
	if (w) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = compare;
		w->wr.atomic.swap = swap;
	}
}

static void wr_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);
	if (w) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = add;
	}
}

/* An operation the simulated device does not execute: ibv_wr_complete answers EOPNOTSUPP and posts nothing. */
static void wr_unsupported(struct ibv_qp_ex *qpx)
{
	of(qpx)->qpx_error = EOPNOTSUPP;
}

/* ibv_wr_local_inv(3): the LOCAL_INV work request of ibv_post_send, with the key in invalidate_rkey. */
static void wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_LOCAL_INV);
	if (w)
		w->invalidate_rkey = rkey;
}

/* ibv_wr_send_inv(3): a SEND_WITH_INV that invalidates rkey at the responder. */
static void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_SEND_WITH_INV);
	if (w)
		w->invalidate_rkey = rkey;
}

/* ibv_wr_bind_mw(3): the BIND_MW work request of a type 2 window (bind_mw.mw, bind_mw.rkey, bind_info). */
static void wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_BIND_MW);
	if (!w)
		return;
	if (!mw || !info) {
		of(qpx)->qpx_error = EINVAL;
		return;
	}
	w->bind_mw.mw = mw;
	w->bind_mw.rkey = rkey;
	w->bind_mw.bind_info = *info;
}

/* ibv_wr_set_ud_addr(3): the destination of the last UD work request (wr.ud of ibv_post_send). */
static void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	w->wr.ud.ah = ah;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

/* ibv_wr_send_tso(3): TSO is for raw packet and IPoIB UD QPs, which the simulated device does not offer. */
static void wr_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	wr_unsupported(qpx);
}

/* ibv_wr_atomic_write(3): the 8 bytes at atomic_wr, as they lie in memory, travel in compare_add. */
static void wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *atomic_wr)
{
	struct ibv_send_wr *w = next_wr(qpx, IBV_WR_ATOMIC_WRITE);
	if (!w)
		return;
	w->wr.atomic.remote_addr = addr;
	w->wr.atomic.rkey = rkey;
	memcpy(&w->wr.atomic.compare_add, atomic_wr, sizeof(w->wr.atomic.compare_add));
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	w->sg_list[0] = (struct ibv_sge){.addr = addr, .length = length, .lkey = lkey};
	w->num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *list)
{
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	if (n > QPX_MAX_SGE) {
		of(qpx)->qpx_error = EINVAL;
		return;
	}
	memcpy(w->sg_list, list, n * sizeof(*list));
	w->num_sge = n;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs)
{
	struct sim_qp *q = of(qpx);
	struct ibv_send_wr *w = last_wr(qpx);
	if (!w)
		return;
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += bufs[i].length;
	unsigned i = q->nwr - 1;
	char *b = realloc(q->inline_bufs[i], len ? len : 1);
	q->inline_bufs[i] = b;
	size_t off = 0;
	for (size_t k = 0; k < n; k++) {
		memcpy(b + off, bufs[k].addr, bufs[k].length);
		off += bufs[k].length;
	}
	w->sg_list[0] = (struct ibv_sge){.addr = (uintptr_t)b, .length = (uint32_t)len, .lkey = 0};
	w->num_sge = 1;
	w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};
	wr_set_inline_data_list(qpx, 1, &b);
}

void rnicsim_set_qpx_ops(struct sim_qp *q)
{
	struct ibv_qp_ex *x = &q->qpx;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_atomic_cmp_swp = wr_cmp_swp;
	x->wr_atomic_fetch_add = wr_fetch_add;
	x->wr_local_inv = wr_local_inv;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_send_tso = wr_send_tso;
	x->wr_atomic_write = wr_atomic_write;
}
