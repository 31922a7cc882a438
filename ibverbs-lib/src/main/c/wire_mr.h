/*
 * The messages of the MR kinds beyond ibv_reg_mr (mr_kinds.c; dev.rnicsim.ibverbs.MrKindVerbs mirrors them) and of
 * ibv_open_qp (xrc.c; XrcVerbs), numbered apart from wire.h's, in the same framing and layout rules.
 *
 *   ALLOC_NULL_MR  wire_handle {pd}, then the call site text   -> wire_mr_resp (a null MR: lkey, rkey 0)
 *   REG_DMABUF_MR  wire_reg_dmabuf_mr, then the call site text -> wire_mr_resp
 *   OPEN_QP        wire_open_qp                                -> wire_handle {qp handle, qp_num}
 *
 * Each MR is then an MR like any other (ibv_dereg_mr sends DEREG_MR); an opened QP is a QP handle like any other
 * (ibv_modify_qp, ibv_query_qp; ibv_destroy_qp closes the handle, not the QP).
 */
#ifndef RNICSIM_WIRE_MR_H
#define RNICSIM_WIRE_MR_H

#include <stdint.h>

#define OP_ALLOC_NULL_MR 84
#define OP_REG_DMABUF_MR 85
#define OP_OPEN_QP 63

/* What the library found behind the fd of ibv_reg_dmabuf_mr (the server cannot look into the process's table). */
enum wire_dmabuf_fd {
	WIRE_DMABUF_FD_DMABUF = 0,  /* an open dma-buf */
	WIRE_DMABUF_FD_CLOSED = 1,  /* no open file: dma_buf_get's fget fails, EBADF */
	WIRE_DMABUF_FD_OTHER = 2,   /* an open file that is not a dma-buf: dma_buf_get answers EINVAL */
};

struct wire_reg_dmabuf_mr {
	uint32_t pd;
	uint32_t access;
	uint32_t fd_kind; /* enum wire_dmabuf_fd */
	int32_t fd;
	uint64_t offset;
	uint64_t length;
	uint64_t iova;
};

struct wire_open_qp {
	uint32_t ctx;
	uint32_t xrcd;
	uint32_t qp_num;
	uint32_t qp_type;
};

_Static_assert(sizeof(struct wire_reg_dmabuf_mr) == 40, "wire_reg_dmabuf_mr");
_Static_assert(sizeof(struct wire_open_qp) == 16, "wire_open_qp");

#endif
