/*
 * Small messages travel with their bytes: the bytes of a SEND or RDMA WRITE of CARRY_MAX_BYTES or less go in its
 * doorbell message (WIRE_SEND_CARRIED), and the bytes of a SEND the model delivered come back to the receiving
 * process in a PLACE message just before the receive's completion, which this library copies into the receive
 * buffer before the completion can be polled. No process_vm_readv/writev in the fabric server for a small SEND.
 *
 * Neither side touches memory with a plain load or store that could fault. The doorbell's writev(2) reads the send
 * buffers itself (the SGEs are iovecs of the message): an unmapped one fails the writev with EFAULT having sent
 * nothing, because carried bytes lie only in the message's first 10 KB or so (no carrying past CARRY_MAX_MSG_BYTES)
 * and a Unix stream socket copies that much into one buffer, all or nothing; the doorbell then goes again without
 * them. A PLACE is written with process_vm_writev(2) into this process: an unmapped receive buffer gives EFAULT,
 * reported in strict mode as the server reports DMA into memory no longer mapped. The server checks that each SGE's
 * lkey maps its address to itself before it uses the carried bytes, and places them only where the model
 * completed the receive.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

uint32_t rnicsim_carry_len(const struct ibv_send_wr *w, size_t msg_off, const struct rnicsim_carry *c)
{
	switch (w->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;
	default:
		return 0;
	}
	if (w->num_sge <= 0 || c->n + (unsigned)w->num_sge > CARRY_MAX_SEGS || msg_off > CARRY_MAX_MSG_BYTES)
		return 0;
	uint64_t len = 0;
	for (int i = 0; i < w->num_sge; i++)
		len += w->sg_list[i].length;
	return len <= CARRY_MAX_BYTES ? (uint32_t)len : 0;
}

void rnicsim_carry_add(struct rnicsim_carry *c, size_t at, const struct ibv_send_wr *w)
{
	for (int i = 0; i < w->num_sge; i++) {
		c->at[c->n] = at;
		c->addr[c->n] = (void *)(uintptr_t)w->sg_list[i].addr;
		c->len[c->n] = w->sg_list[i].length;
		at += w->sg_list[i].length;
		c->n++;
	}
}

int rnicsim_carry_doorbell(uint16_t op, char *msg, size_t len, const struct rnicsim_carry *c)
{
	struct iovec iov[2 * CARRY_MAX_SEGS + 2];
	int n = 0;
	if (rnicsim_doorbells_active()) {
		/* the doorbell is a copy into shared memory (ring.c): the send buffers' bytes go into the message first,
		 * read by process_vm_readv(2) on this process, which fails with EFAULT where a writev would */
		struct iovec local[CARRY_MAX_SEGS];
		size_t total = 0;
		for (unsigned i = 0; i < c->n; i++) {
			local[i] = (struct iovec){msg + c->at[i], c->len[i]};
			iov[i] = (struct iovec){c->addr[i], c->len[i]};
			total += c->len[i];
		}
		ssize_t got = total ? process_vm_readv(rnicsim_pid(), local, c->n, iov, c->n, 0) : 0;
		if (got != (ssize_t)total)
			return EFAULT;
		iov[0] = (struct iovec){msg, sizeof(struct wire_hdr)};
		iov[1] = (struct iovec){msg + sizeof(struct wire_hdr), len - sizeof(struct wire_hdr)};
		return rnicsim_doorbell(op, iov, 2);
	}
	size_t from = 0;
	/* the header alone first, as rnicsim_doorbell wants it */
	iov[n++] = (struct iovec){msg, sizeof(struct wire_hdr)};
	from = sizeof(struct wire_hdr);
	for (unsigned i = 0; i < c->n; i++) {
		if (c->at[i] > from)
			iov[n++] = (struct iovec){msg + from, c->at[i] - from};
		if (c->len[i])
			iov[n++] = (struct iovec){c->addr[i], c->len[i]};
		from = c->at[i] + c->len[i];
	}
	if (len > from)
		iov[n++] = (struct iovec){msg + from, len - from};
	return rnicsim_doorbell(op, iov, n);
}

/* PLACE: wire_place, its ranges, then their bytes in order. */
void rnicsim_place(const char *payload, size_t len)
{
	struct wire_place p;
	if (len < sizeof(p))
		return;
	memcpy(&p, payload, sizeof(p));
	if (p.count == 0 || p.count > CARRY_MAX_SEGS + 1 || len < sizeof(p) + p.count * sizeof(struct wire_range))
		return;
	struct iovec remote[CARRY_MAX_SEGS + 1];
	const char *bytes = payload + sizeof(p) + p.count * sizeof(struct wire_range);
	size_t total = 0;
	for (uint32_t i = 0; i < p.count; i++) {
		struct wire_range r;
		memcpy(&r, payload + sizeof(p) + i * sizeof(r), sizeof(r));
		remote[i] = (struct iovec){(void *)(uintptr_t)r.addr, r.length};
		total += r.length;
	}
	if (bytes + total > payload + len)
		return;
	struct iovec local = {(void *)bytes, total};
	ssize_t put = process_vm_writev(rnicsim_pid(), &local, 1, remote, p.count, 0);
	if (put < (ssize_t)total && rnicsim_strict()) {
		int e = put < 0 ? errno : EFAULT;
		fprintf(stderr, "rnicsim strict: the device could not write the receive buffer of wr_id %llu in process %d "
				"(errno %d): the range was unmapped after it was registered; the pages stay pinned for "
				"the NIC, but the program no longer sees them (DMA into memory no longer mapped)\n",
			(unsigned long long)p.wr_id, (int)getpid(), e);
		fflush(stderr);
	}
}
