/*
 * The tag-matching messages between this library and the fabric server (dev.rnicsim.ibverbs.TmVerbs and TmData
 * mirror them), numbered apart from wire.h's, in the same framing and layout rules.
 *
 *   TM_CAPS         wire_handle {ctx}                                  -> wire_tm_caps (ibv_query_device_ex's tm_caps)
 *   CREATE_TM_SRQ   wire_create_tm_srq                                 -> wire_tm_srq_resp
 *   POST_SRQ_OPS    wire_post {srq, count}, then count wire_ops_wr     -> wire_ops_resp, then `done` handles (uint32):
 *                   the operations are done in order up to the first refused one, whose errno is `err` (0: all done)
 *   TM_WC (server)  wire_post {0, count}, then count wire_tm_wc: completions that take no ordinary receive of the SRQ
 *                   (IBV_WC_TM_ADD, _DEL, _SYNC, and IBV_WC_TM_RECV of a matched tag), each with the TMH's tag.
 *                   Those that take an ordinary receive (unexpected, NO_TAG) come as WC messages, tag 0.
 */
#ifndef RNICSIM_WIRE_TM_H
#define RNICSIM_WIRE_TM_H

#include <stdint.h>

#include "wire.h"

#define OP_TM_CAPS 103
#define OP_CREATE_TM_SRQ 104
#define OP_POST_SRQ_OPS 105
#define OP_TM_WC 106

struct wire_tm_caps {
	uint32_t max_rndv_hdr_size;
	uint32_t max_num_tags;
	uint32_t flags;
	uint32_t max_ops;
	uint32_t max_sge;
	uint32_t pad;
};

struct wire_create_tm_srq {
	uint32_t pd;
	uint32_t cq;
	uint32_t extended_cq; /* the CQ is one of ibv_create_cq_ex */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t max_num_tags;
	uint32_t max_ops;
};

struct wire_tm_srq_resp {
	uint32_t srq;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_num;
};

struct wire_ops_wr {
	uint64_t wr_id;
	uint64_t recv_wr_id;
	uint64_t tag;
	uint64_t mask;
	uint64_t sge_addr; /* the first SGE of an ADD (num_sge 0: none) */
	uint32_t opcode;
	uint32_t flags;
	uint32_t unexpected_cnt;
	uint32_t handle;
	uint32_t num_sge;
	uint32_t sge_length;
	uint32_t sge_lkey;
	uint32_t pad;
};

struct wire_ops_resp {
	uint32_t err;
	uint32_t done;
};

struct wire_tm_wc {
	struct wire_wc wc;
	uint64_t tag;  /* the TMH's tag (host order) */
	uint32_t priv; /* the TMH's app_ctx (host order) */
	uint32_t pad;
};

_Static_assert(sizeof(struct wire_tm_caps) == 24, "wire_tm_caps");
_Static_assert(sizeof(struct wire_create_tm_srq) == 32, "wire_create_tm_srq");
_Static_assert(sizeof(struct wire_tm_srq_resp) == 16, "wire_tm_srq_resp");
_Static_assert(sizeof(struct wire_ops_wr) == 72, "wire_ops_wr");
_Static_assert(sizeof(struct wire_ops_resp) == 8, "wire_ops_resp");
_Static_assert(sizeof(struct wire_tm_wc) == 80, "wire_tm_wc");

#endif
