/*
 * The completion side of the data path: the server's WC messages are pushed into a ring of the CQ in this process
 * (rnicsim_cq_push, which also raises the completion event of an armed CQ on its channel), and ibv_poll_cq takes
 * them from that ring, letting the fabric server run when the ring is empty.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

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
