/*
 * The data path: ibv_post_send and ibv_post_recv ring the fabric server's doorbell with one message each (no
 * answer is awaited, as a provider writes the WQE and rings the doorbell). Each work request is first checked as a
 * provider checks it at post time (post_rules.c); the completions come back through poll.c, and the ibv_wr_* API
 * (wr_api.c) posts through here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Writes n SGEs into the doorbell message at off (its room reserved); returns the offset past them. */
static size_t put_sges(size_t off, const struct ibv_sge *sg_list, int n)
{
	for (int i = 0; i < n; i++) {
		struct wire_sge *g = (struct wire_sge *)(msg + off);
		g->addr = sg_list[i].addr;
		g->length = sg_list[i].length;
		g->lkey = sg_list[i].lkey;
		off += sizeof(*g);
	}
	return off;
}

/* Writes one send work request into the doorbell message at off: its wire_send_wr, its SGEs, then its inline
 * bytes or the room for the bytes it carries (carry: ibv_post_send's first try), then the XRCETH of an XRC send;
 * returns the offset past it. */
static size_t put_send_wr(struct sim_qp *q, struct ibv_send_wr *posted, size_t off, int carry,
			  struct rnicsim_carry *carried)
{
	/* a negative num_sge that rnicsim_check_send let through (mlx5) is a request without SGEs */
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
		carry_len = rnicsim_carry_len(w, off, carried);
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
	off = put_sges(off + sizeof(*s), w->sg_list, w->num_sge);
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
		rnicsim_carry_add(carried, off, w);
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
	return off;
}

/* Builds the doorbell of a chain of send work requests and rings it; *carry_fault when the send buffers of the
 * requests that carry their bytes could not be read (nothing was sent: ring again without carrying). */
static int post_send(struct sim_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, int carry,
		     int *carry_fault, const char *verb)
{
	int e = 0;
	size_t off = sizeof(struct wire_hdr) + sizeof(struct wire_post);
	unsigned count = 0;
	struct rnicsim_carry carried = {.n = 0};
	int refused = 0;
	for (struct ibv_send_wr *posted = wr; posted; posted = posted->next) {
		e = rnicsim_check_send(q, posted, count);
		if (e) {
			*bad_wr = posted;
			refused = 1;
			break;
		}
		off = put_send_wr(q, posted, off, carry, &carried);
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
	if (refused && rnicsim_strict())
		rnicsim_report_refusal(verb, e, rnicsim_post_why());
	return e;
}

/* verb: the name strict mode's report gives a refusal (ibv_wr_complete posts through here too) */
int rnicsim_post_send_as(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, const char *verb)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	int carry_fault = 0;
	rnicsim_lock();
	int e = post_send(q, wr, bad_wr, 1, &carry_fault, verb);
	if (carry_fault)
		e = post_send(q, wr, bad_wr, 0, &carry_fault, verb);
	rnicsim_unlock();
	return e;
}

int rnicsim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	return rnicsim_post_send_as(qp, wr, bad_wr, "ibv_post_send");
}

int rnicsim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sim_qp *q = (struct sim_qp *)qp;
	int e = 0;
	rnicsim_lock();
	size_t off = sizeof(struct wire_hdr) + sizeof(struct wire_post);
	unsigned count = 0;
	for (struct ibv_recv_wr *w = wr; w; w = w->next) {
		e = rnicsim_check_recv(q, w, count);
		if (e) {
			*bad_wr = w;
			if (rnicsim_strict())
				rnicsim_report_refusal("ibv_post_recv", e, rnicsim_post_why());
			break;
		}
		int nsge = w->num_sge < 0 ? 0 : w->num_sge;
		reserve(off + sizeof(struct wire_recv_wr) + nsge * sizeof(struct wire_sge));
		struct wire_recv_wr *r = (struct wire_recv_wr *)(msg + off);
		r->wr_id = w->wr_id;
		r->num_sge = nsge;
		r->pad = 0;
		off = put_sges(off + sizeof(*r), w->sg_list, nsge);
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
