/*
 * The messages between this library and the fabric server (dev.rnicsim.ibverbs.Wire mirrors them), over a Unix
 * stream socket, little-endian, in the host's layout (fields only of 8, 4 and 16 bytes, each at an offset that is
 * a multiple of its size, so the layout is the same with every compiler).
 *
 *   0        4        6        8                 12                16
 *   +--------+--------+--------+-----------------+-----------------+
 *   | len    | op     | flags  | seq             | err             |  then len - 16 bytes of payload
 *   +--------+--------+--------+-----------------+-----------------+
 *
 * A control verb is a request and a response with the same seq (err: 0 or the errno). POST_SEND and POST_RECV
 * are one-way doorbells (seq 0); completions (WC), the bytes of small SENDs received (PLACE) and strict-mode reports
 * (DIAG) come unasked.
 */
#ifndef RNICSIM_WIRE_H
#define RNICSIM_WIRE_H

#include <stdint.h>

#define RNICSIM_WIRE_VERSION 1

enum rnicsim_op {
	OP_HELLO = 1,
	OP_OPEN = 2,
	OP_CLOSE_CTX = 3,
	OP_QUERY_DEVICE = 4,
	OP_QUERY_PORT = 5,
	OP_QUERY_GID = 6,
	OP_ALLOC_PD = 7,
	OP_DEALLOC_PD = 8,
	OP_REG_MR = 9,
	OP_DEREG_MR = 10,
	OP_CREATE_CQ = 11,
	OP_DESTROY_CQ = 12,
	OP_CREATE_QP = 13,
	OP_MODIFY_QP = 14,
	OP_DESTROY_QP = 15,
	OP_POST_SEND = 16,
	OP_POST_RECV = 17,
	OP_LEAKS = 18,
	OP_QUERY_QP = 19,
	OP_REREG_MR = 20,
	OP_ADVISE_MR = 21,
	OP_ALLOC_MW = 22,
	OP_DEALLOC_MW = 23,
	OP_ATTACH = 24, /* sent by rnicsim exec (ProgramRunner) when it joins a live fabric, never by the library */
	OP_CREATE_SRQ = 25,
	OP_MODIFY_SRQ = 26,
	OP_QUERY_SRQ = 27,
	OP_DESTROY_SRQ = 28,
	OP_POST_SRQ_RECV = 29,
	OP_CREATE_AH = 30,
	OP_DESTROY_AH = 31,
	OP_RING = 32, /* the server's messages through shared memory from now on (ring.c) */
	OP_POST_SITE = 33, /* strict mode: where the next ibv_post_send of a QP is called from (one way; strict.c) */
	OP_OPEN_XRCD = 60, /* XRC (xrc.c): numbered apart from the rest */
	OP_CLOSE_XRCD = 61,
	OP_CREATE_XRC_SRQ = 62,
	OP_CQEX_CAPS = 70, /* the extended CQ requests (cq_ex.c, extended.c): numbered apart from the rest */
	OP_CREATE_CQ_EX = 71,
	OP_RESIZE_CQ = 72,
	OP_QUERY_RT_VALUES = 73,
	OP_CQ_SYNC = 74,
	OP_DOORBELL_RING = 90, /* the library's doorbells and requests through shared memory from now on (ring.c) */
	OP_WC = 100,
	OP_DIAG = 101,
	OP_PLACE = 102,
	OP_REFUSAL = 110, /* strict mode: the model's reason for the errno of the answer that follows (verb, '\n', why) */
};

struct wire_hdr {
	uint32_t len;
	uint16_t op;
	uint16_t flags;
	uint32_t seq;
	int32_t err;
};

/* HELLO: the process, its RLIMIT_MEMLOCK and CAP_IPC_LOCK; the answer lists the devices. */
struct wire_hello {
	uint32_t version;
	uint32_t pid;
	uint64_t memlock_cur;
	uint64_t memlock_max;
	uint32_t cap_ipc_lock;
	uint32_t strict;
};

struct wire_device {
	char name[64];
	uint64_t node_guid_be;
	uint32_t node_type;
	uint32_t transport;
};

struct wire_handle { /* OPEN (device index), CLOSE_CTX, ALLOC_PD (ctx), DEALLOC_PD, DESTROY_CQ, DESTROY_QP, ... */
	uint32_t handle;
	uint32_t arg;
};

enum wire_dev_attr { /* QUERY_DEVICE answers fw_ver[64] then these, each a uint64_t */
	DA_NODE_GUID, DA_SYS_IMAGE_GUID, DA_MAX_MR_SIZE, DA_PAGE_SIZE_CAP, DA_VENDOR_ID, DA_VENDOR_PART_ID, DA_HW_VER,
	DA_MAX_QP, DA_MAX_QP_WR, DA_DEVICE_CAP_FLAGS, DA_MAX_SGE, DA_MAX_SGE_RD, DA_MAX_CQ, DA_MAX_CQE, DA_MAX_MR,
	DA_MAX_PD, DA_MAX_QP_RD_ATOM, DA_MAX_QP_INIT_RD_ATOM, DA_MAX_RES_RD_ATOM, DA_MAX_MW, DA_ATOMIC_CAP, DA_MAX_SRQ,
	DA_MAX_PKEYS, DA_LOCAL_CA_ACK_DELAY, DA_PHYS_PORT_CNT, DA_ODP_GENERAL_CAPS, DA_ODP_RC_CAPS,
	DA_ODP_UC_CAPS, DA_ODP_UD_CAPS, DA_ODP_XRC_CAPS, DA_MAX_SRQ_WR, DA_MAX_SRQ_SGE,
	DA_MAX_MCAST_GRP, DA_MAX_MCAST_QP_ATTACH, DA_MAX_TOTAL_MCAST_QP_ATTACH, DA_MAX_AH,
	DA_COUNT
};

enum wire_port_attr { /* QUERY_PORT answers these, each a uint64_t */
	PA_STATE, PA_MAX_MTU, PA_ACTIVE_MTU, PA_GID_TBL_LEN, PA_PORT_CAP_FLAGS, PA_MAX_MSG_SZ, PA_PKEY_TBL_LEN,
	PA_LINK_LAYER, PA_LID, PA_ACTIVE_WIDTH, PA_ACTIVE_SPEED,
	PA_COUNT
};

struct wire_query_gid {
	uint32_t ctx;
	uint32_t port;
	uint32_t index;
	uint32_t pad;
};

/* QUERY_GID answers the entry's GID and its type (enum ibv_gid_type: 0 IB, 1 RoCE v1, 2 RoCE v2) */
struct wire_gid {
	uint8_t raw[16];
	uint32_t gid_type;
};

/* REG_MR, then the call site as text to the end of the message; the answer: wire_mr_resp. */
struct wire_reg_mr {
	uint32_t pd;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
};

struct wire_mr_resp {
	uint32_t mr;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t pad;
};

/* DEREG_MR: wire_handle, then the call site as text. */

struct wire_create_cq {
	uint32_t ctx;
	uint32_t cqe;
	uint32_t comp_vector; /* checked against num_comp_vectors, which OPEN answers in wire_handle.arg */
	uint32_t pad;
};

struct wire_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	uint32_t pad; /* response: the inline-overflow errno */
};

struct wire_create_qp {
	uint32_t pd;
	uint32_t send_cq;
	uint32_t recv_cq;
	uint32_t qp_type;
	uint32_t sq_sig_all;
	uint32_t srq; /* the SRQ's handle, 0 for a receive queue of the QP's own */
	struct wire_qp_cap cap;
	uint32_t create_flags; /* IBV_QP_CREATE_* with IBV_QP_INIT_ATTR_CREATE_FLAGS, else 0 */
	/* IBV_QP_EX_WITH_* with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (WIRE_SEND_OPS_GIVEN set), else 0; a bit above 30 of
	 * the program's 64 sets WIRE_SEND_OPS_UNKNOWN, which no provider takes */
	uint32_t send_ops_flags;
};
#define WIRE_SEND_OPS_GIVEN 0x80000000u
#define WIRE_SEND_OPS_UNKNOWN 0x40000000u

/* post_rules: WIRE_POST_* bits, the device's checks at post time beyond the capacities (its provider's rules). */
#define WIRE_POST_ATOMIC_ALIGNMENT 1 /* a misaligned atomic is refused with EINVAL (rxe) */
#define WIRE_POST_ATOMICS_DISABLED 2 /* the QP has no atomics: EOPNOTSUPP at post (mlx5 without ATOMIC_HCA) */
#define WIRE_POST_RESET_CLEANS_CQ 4 /* RESET removes the QP's unpolled completions from its CQs (mlx4, mlx5) */
#define WIRE_POST_ATOMIC_WRITE 8 /* an RC QP of a device with IBV_DEVICE_ATOMIC_WRITE: ATOMIC_WRITE is executed */
#define WIRE_POST_SGE_OVERFLOW_ENOMEM 16 /* more SGEs than max_send_sge: ENOMEM (mlx5), else EINVAL */
#define WIRE_POST_RECV_SRQ_ENOMEM 32 /* a receive on a QP with an SRQ: ENOMEM (mlx4, mlx5), else EINVAL */
#define WIRE_POST_SGE_COUNT_SIGNED 64 /* num_sge compared as an int: a negative count posts no SGE (mlx5), else EINVAL */
#define WIRE_POST_QP_FIELDS_WHOLE 128 /* retry_cnt, rnr_retry, min_rnr_timer kept as given (rxe), else masked */
#define WIRE_POST_DEST_QPN_WHOLE 256 /* dest_qp_num kept as given (rxe), else its low 24 bits */
#define WIRE_POST_RD_ATOMIC_ZERO_AS_ONE 512 /* a read/atomic depth of 0 kept as 1, log 0 (mlx4, mlx5) */
#define WIRE_POST_RESET_KEEPS_ATTRS 1024 /* ibv_query_qp after RESET shows the attributes given before (rxe), else 0 */
struct wire_qp_resp {
	uint32_t qp;
	uint32_t qp_num;
	struct wire_qp_cap cap;
	uint32_t post_rules;
	uint32_t pad;
};

struct wire_modify_qp {
	uint32_t qp;
	uint32_t attr_mask;
	uint32_t qp_state;
	uint32_t qp_access_flags;
	uint32_t dest_qp_num;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t path_mtu;
	uint32_t timeout;
	uint32_t retry_cnt;
	uint32_t rnr_retry;
	uint32_t min_rnr_timer;
	uint32_t dlid;
	uint32_t is_global;
	uint8_t dgid[16];
	uint32_t qkey; /* IBV_QP_QKEY (UD) */
	uint32_t pad;
	/* the rest of the call, which the server checks as the kernel does (ib_modify_qp_is_ok, port and values) */
	uint32_t cur_qp_state;
	uint32_t port_num;
	uint32_t pkey_index;
	uint32_t max_rd_atomic;
	uint32_t max_dest_rd_atomic;
	uint32_t ah_port_num;
	uint32_t ah_sgid_index;
	uint32_t pad2;
};

/* POST_SEND: wire_post, then per work request wire_send_wr, its SGEs, its inline bytes rounded up to 8. A SEND or
 * RDMA WRITE flagged WIRE_SEND_CARRIED in send_flags carries the bytes of its SGEs in the same place (inline_len of
 * them), read by the library at post; its SGEs stay what the program gave (carry.c). */
#define WIRE_SEND_CARRIED 0x80000000u
struct wire_post {
	uint32_t qp;
	uint32_t count;
};

struct wire_send_wr {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t opcode;
	uint32_t send_flags;
	uint32_t rkey;
	uint32_t imm_data;
	uint32_t num_sge;
	uint32_t inline_len;
};

struct wire_recv_wr {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t pad;
};

struct wire_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* REREG_MR: the MR's handle, the flags, the new PD's handle (0: none), the access, address and length; the answer:
 * wire_rereg_resp (err 0 in the header; the errno and ibv_rereg_mr's return value in the payload). */
struct wire_rereg_mr {
	uint32_t mr;
	uint32_t flags;
	uint32_t pd;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
};

struct wire_rereg_resp {
	int32_t err;
	int32_t rereg_err;
	uint32_t lkey;
	uint32_t rkey;
};

/* ADVISE_MR: this, then num_sge wire_sge. */
struct wire_advise_mr {
	uint32_t pd;
	uint32_t advice;
	uint32_t flags;
	uint32_t num_sge;
};

/* ALLOC_MW: wire_handle {pd, type}; the answer wire_handle {mw, rkey}. DEALLOC_MW: wire_handle. A BIND_MW work
 * request travels in POST_SEND as a wire_send_wr: remote_addr the bound address, compare_add the length, swap the
 * window's handle (high 32 bits) and the MR's (low; 0 to unbind), rkey the new rkey, imm_data the access flags.
 * LOCAL_INV and SEND_WITH_INV carry the rkey to invalidate in imm_data. */

/* CREATE_SRQ: pd, max_wr, max_sge, srq_limit; the answer: the SRQ's handle, the granted max_wr and max_sge, and its
 * srq_num (0 where the provider has no get_srq_num). MODIFY_SRQ: srq, attr_mask, max_wr, srq_limit. QUERY_SRQ: wire_handle; the answer: max_wr, max_sge,
 * srq_limit. DESTROY_SRQ: wire_handle. POST_SRQ_RECV: as POST_RECV, with the SRQ's handle in wire_post.qp. */
struct wire_srq {
	uint32_t a;
	uint32_t b;
	uint32_t c;
	uint32_t d;
};

/* CREATE_AH: the address vector of ibv_create_ah; the answer: wire_handle {ah}. DESTROY_AH: wire_handle. A UD
 * send (wr.ud) travels in POST_SEND as a wire_send_wr: remote_addr the AH's handle, compare_add the remote QPN,
 * rkey the remote Q_Key. */
struct wire_create_ah {
	uint32_t pd;
	uint32_t dlid;
	uint32_t is_global;
	uint32_t port_num;
	uint8_t dgid[16];
	uint32_t sgid_index; /* grh.sgid_index, checked on an Ethernet port as the kernel checks it */
	uint32_t pad;
};

/* OPEN_XRCD: the context, whether a file names the domain (ibv_xrcd_init_attr.fd not -1), the oflags, and the file's
 * st_dev and st_ino (the kernel finds a domain by its inode); the answer: wire_handle {xrcd}. CLOSE_XRCD: wire_handle.
 * CREATE_XRC_SRQ: wire_xrc_srq; the answer: wire_xrc_srq_resp. An XRC_RECV QP is created with CREATE_QP, the XRC
 * domain's handle in wire_create_qp.pd (as uverbs takes an XRC_TGT's domain in pd_handle) and no CQ. On an XRC_SEND
 * QP each wire_send_wr of POST_SEND is followed, after its SGEs and inline bytes, by a wire_xrc_wr. */
struct wire_open_xrcd {
	uint32_t ctx;
	uint32_t has_file;
	uint32_t oflags;
	uint32_t pad;
	uint64_t st_dev;
	uint64_t st_ino;
};

struct wire_xrc_srq {
	uint32_t pd;
	uint32_t xrcd;
	uint32_t cq;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct wire_xrc_srq_resp {
	uint32_t srq;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
	uint32_t srq_num;
	uint32_t pad;
};

struct wire_xrc_wr {
	uint32_t remote_srqn;
	uint32_t pad;
};

/* CQEX_CAPS: wire_handle {ctx}; the answer: what the device's provider offers, which fills the context's ops table.
 * CREATE_CQ_EX: wire_create_cq_ex; the answer: wire_create_cq {cq, cqe}. RESIZE_CQ: wire_resize_cq; the answer:
 * wire_handle {cqe}. QUERY_RT_VALUES: wire_handle {ctx}; the answer: the raw clock (uint64_t, cycles of
 * hca_core_clock). CQ_SYNC: no payload; answered once every completion of what was posted is on its way. */
#define WIRE_CQEX_RESIZE 1    /* ibv_resize_cq */
#define WIRE_CQEX_RT_VALUES 2 /* ibv_query_rt_values_ex */
#define WIRE_CQEX_DOMAINS 4   /* ibv_alloc_td, ibv_alloc_parent_domain */
#define WIRE_CQEX_ALLOC_TYPE_ENV 8 /* the provider reads MLX_*_ALLOC_TYPE (mlx5_get_alloc_type) */
struct wire_cqex_caps {
	uint64_t wc_flags;	  /* IBV_WC_EX_WITH_* that ibv_create_cq_ex accepts */
	uint64_t hca_core_clock;  /* kHz; 0: no completion clock */
	uint64_t timestamp_mask;  /* completion_timestamp_mask */
	uint32_t features;	  /* WIRE_CQEX_* */
	uint32_t pad;
};

struct wire_create_cq_ex {
	uint32_t ctx;
	uint32_t cqe;
	uint64_t wc_flags;
	uint32_t comp_mask;
	uint32_t flags;
	uint32_t not_parent_domain; /* IBV_CQ_INIT_ATTR_MASK_PD names a PD that is no parent domain */
	uint32_t comp_vector;       /* checked against num_comp_vectors after the provider's checks */
};

struct wire_resize_cq {
	uint32_t cq;
	uint32_t cqe;
	uint32_t held; /* completions this library holds for the CQ, not yet polled */
	uint32_t pad;
};

/* WC: wire_post-like count, then that many wire_wc. */
#define WIRE_WC_HIDDEN 1 /* an unsignaled success: frees its send queue slot, never reaches the CQ */
struct wire_wc {
	uint64_t wr_id;
	uint32_t cq;
	uint32_t qp;
	uint32_t status;
	uint32_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint32_t flags;
	uint32_t pad;
	uint64_t time_ns; /* when the device wrote the CQE, on its clock (the fabric's simulated clock) */
};

/* PLACE: the bytes of a SEND the model delivered to a receive of this process, sent just before the receive's
 * completion: wire_place, count wire_range (the receive buffer's addresses in this process), then their bytes in
 * order. The library writes them before the completion can be polled (carry.c). */
struct wire_place {
	uint64_t wr_id; /* the receive's, for strict mode's report */
	uint32_t count;
	uint32_t pad;
};

struct wire_range {
	uint64_t addr;
	uint64_t length;
};

_Static_assert(sizeof(struct wire_place) == 16, "wire_place");
_Static_assert(sizeof(struct wire_range) == 16, "wire_range");
_Static_assert(sizeof(struct wire_hdr) == 16, "wire_hdr");
_Static_assert(sizeof(struct wire_hello) == 32, "wire_hello");
_Static_assert(sizeof(struct wire_device) == 80, "wire_device");
_Static_assert(sizeof(struct wire_reg_mr) == 32, "wire_reg_mr");
_Static_assert(sizeof(struct wire_create_qp) == 56, "wire_create_qp");
_Static_assert(sizeof(struct wire_create_cq) == 16, "wire_create_cq");
_Static_assert(sizeof(struct wire_qp_resp) == 40, "wire_qp_resp");
_Static_assert(sizeof(struct wire_modify_qp) == 112, "wire_modify_qp");
_Static_assert(sizeof(struct wire_create_ah) == 40, "wire_create_ah");
_Static_assert(sizeof(struct wire_send_wr) == 56, "wire_send_wr");
_Static_assert(sizeof(struct wire_recv_wr) == 16, "wire_recv_wr");
_Static_assert(sizeof(struct wire_sge) == 16, "wire_sge");
_Static_assert(sizeof(struct wire_wc) == 64, "wire_wc");
_Static_assert(sizeof(struct wire_cqex_caps) == 32, "wire_cqex_caps");
_Static_assert(sizeof(struct wire_create_cq_ex) == 32, "wire_create_cq_ex");
_Static_assert(sizeof(struct wire_resize_cq) == 16, "wire_resize_cq");
_Static_assert(sizeof(struct wire_rereg_mr) == 32, "wire_rereg_mr");
_Static_assert(sizeof(struct wire_rereg_resp) == 16, "wire_rereg_resp");
_Static_assert(sizeof(struct wire_advise_mr) == 16, "wire_advise_mr");
_Static_assert(sizeof(struct wire_open_xrcd) == 32, "wire_open_xrcd");
_Static_assert(sizeof(struct wire_xrc_srq) == 24, "wire_xrc_srq");
_Static_assert(sizeof(struct wire_xrc_srq_resp) == 24, "wire_xrc_srq_resp");
_Static_assert(sizeof(struct wire_xrc_wr) == 8, "wire_xrc_wr");

#endif
