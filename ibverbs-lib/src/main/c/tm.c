/*
 * Tag matching (ibv_create_srq_ex(3) of type IBV_SRQT_TM, ibv_post_srq_ops(3), the TM fields of extended CQs):
 * ibv_query_device_ex's tm_caps, a TM SRQ, its list operations and the tag of a completion
 * (ibv_wc_read_tm_info). The simulated device decides each one (sim-nic's TagMatchingList: mlx5's and the kernel's
 * rules, the phase counters, the matching); the server moves the bytes of a matched message to the tag's buffer,
 * reads the sender's buffer for a rendezvous request, and sends the completions. The SRQ's ordinary receives
 * (ibv_post_srq_recv) are those of any SRQ (srq.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"
#include "wire_tm.h"

void rnicsim_tm_caps(struct ibv_context *ctx, struct ibv_tm_caps *caps)
{
	struct wire_handle req = {.handle = rnicsim_ctx_handle(ctx)};
	struct wire_tm_caps c = {0};
	if (rnicsim_rpc(OP_TM_CAPS, &req, sizeof(req), NULL, 0, &c, sizeof(c), NULL))
		return; /* no answer: all 0, as a device without tag matching reports */
	caps->max_rndv_hdr_size = c.max_rndv_hdr_size;
	caps->max_num_tags = c.max_num_tags;
	caps->flags = c.flags;
	caps->max_ops = c.max_ops;
	caps->max_sge = c.max_sge;
}

/*
 * ibv_create_srq_ex of type IBV_SRQT_TM: PD, CQ and TM in comp_mask (libibverbs' ibv_cmd_create_srq_ex refuses a TM
 * SRQ without tm_cap: EINVAL); the device checks the rest (an extended CQ, max_num_tags, max_ops, max_wr, max_sge).
 */
struct ibv_srq *rnicsim_create_tm_srq(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{
	uint32_t need = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	if ((attr->comp_mask & need) != need || !attr->pd || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}
	struct sim_cq *cq = (struct sim_cq *)attr->cq;
	struct wire_create_tm_srq req = {.pd = ((struct sim_pd *)attr->pd)->handle,
					 .cq = cq->handle,
					 .extended_cq = cq->cqx.start_poll != NULL,
					 .max_wr = attr->attr.max_wr,
					 .max_sge = attr->attr.max_sge,
					 .srq_limit = attr->attr.srq_limit,
					 .max_num_tags = attr->tm_cap.max_num_tags,
					 .max_ops = attr->tm_cap.max_ops};
	struct wire_tm_srq_resp resp = {0};
	int e = rnicsim_rpc(OP_CREATE_TM_SRQ, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	return rnicsim_srq_made(attr, e, resp.srq, resp.max_wr, resp.max_sge, resp.srq_num, 1);
}

/* ibv_post_srq_ops(3): the list in order, up to the first operation the device refuses (*bad_op, its errno). An ADD
 * done gets its handle in wr->tm.handle. */
static int post_srq_ops(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op)
{
	uint32_t n = 0;
	for (struct ibv_ops_wr *w = op; w; w = w->next)
		n++;
	struct wire_ops_wr *ws = calloc(n ? n : 1, sizeof(*ws));
	uint32_t *answer = calloc(2 + n, sizeof(uint32_t));
	if (!ws || !answer) {
		free(ws);
		free(answer);
		*bad_op = op;
		return ENOMEM;
	}
	uint32_t i = 0;
	for (struct ibv_ops_wr *w = op; w; w = w->next, i++) {
		ws[i].wr_id = w->wr_id;
		ws[i].opcode = w->opcode;
		ws[i].flags = w->flags;
		ws[i].unexpected_cnt = w->tm.unexpected_cnt;
		ws[i].handle = w->tm.handle;
		if (w->opcode == IBV_WR_TAG_ADD) {
			ws[i].recv_wr_id = w->tm.add.recv_wr_id;
			ws[i].tag = w->tm.add.tag;
			ws[i].mask = w->tm.add.mask;
			ws[i].num_sge = w->tm.add.num_sge;
			if (w->tm.add.num_sge > 0 && w->tm.add.sg_list) {
				ws[i].sge_addr = w->tm.add.sg_list[0].addr;
				ws[i].sge_length = w->tm.add.sg_list[0].length;
				ws[i].sge_lkey = w->tm.add.sg_list[0].lkey;
			}
		}
	}
	struct wire_post head = {.qp = rnicsim_srq_handle(srq), .count = n};
	size_t len = 0;
	char *req = malloc(sizeof(head) + n * sizeof(*ws));
	if (!req) {
		free(ws);
		free(answer);
		*bad_op = op;
		return ENOMEM;
	}
	memcpy(req, &head, sizeof(head));
	memcpy(req + sizeof(head), ws, n * sizeof(*ws));
	int e = rnicsim_rpc(OP_POST_SRQ_OPS, req, sizeof(head) + n * sizeof(*ws), NULL, 0, answer,
			    (2 + n) * sizeof(uint32_t), &len);
	free(req);
	free(ws);
	if (!e)
		e = (int)answer[0];
	uint32_t done = e && len < 2 * sizeof(uint32_t) ? 0 : answer[1];
	struct ibv_ops_wr *w = op;
	for (i = 0; w && i < done; w = w->next, i++)
		if (w->opcode == IBV_WR_TAG_ADD)
			w->tm.handle = answer[2 + i];
	free(answer);
	if (e)
		*bad_op = w;
	return e;
}

/* TM_WC: completions that take no ordinary receive, each with its tag (see wire_tm.h). */
void rnicsim_tm_wcs(const char *payload, size_t len)
{
	const struct wire_post *p = (const struct wire_post *)payload;
	const struct wire_tm_wc *w = (const struct wire_tm_wc *)(payload + sizeof(*p));
	for (uint32_t i = 0; i < p->count && sizeof(*p) + (i + 1) * sizeof(*w) <= len; i++) {
		struct sim_cq *cq = rnicsim_cq_of(w[i].wc.cq);
		if (!cq)
			continue;
		rnicsim_cq_push(cq, &w[i].wc);
		if (cq->tm_tags) {
			struct ibv_wc_tm_info *t = &cq->tm_tags[(cq->head + cq->count - 1) % cq->cap];
			t->tag = w[i].tag;
			t->priv = w[i].priv;
		}
	}
}

void rnicsim_set_tm_ops(struct verbs_context *vctx)
{
	vctx->post_srq_ops = post_srq_ops;
}
