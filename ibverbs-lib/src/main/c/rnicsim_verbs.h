/*
 * rnic-sim's libibverbs: the objects behind the handles a program holds, and the connection to the fabric server.
 *
 * Every object a verb returns is the public struct of <infiniband/verbs.h> first, then what this library keeps
 * beside it; the server knows each by a handle (a number per connection). Thread safety: one mutex guards the
 * connection and every completion ring, so verbs may be called from several threads, as libibverbs allows.
 */
#ifndef RNICSIM_VERBS_H
#define RNICSIM_VERBS_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wire.h"

#define EXPORT __attribute__((visibility("default")))
#define CALLSITE_BYTES 1024

struct sim_ctx {
	uint32_t handle;
	uint32_t device_index;
	struct verbs_context vctx; /* its last member is the struct ibv_context programs hold */
};

struct sim_pd {
	struct ibv_pd pd;
	uint32_t handle;
};

struct sim_mr {
	struct ibv_mr mr;
	uint32_t handle;
};

struct sim_channel {
	struct ibv_comp_channel channel;
	struct sim_cq **events; /* CQs with an event not yet taken by ibv_get_cq_event, oldest first */
	unsigned events_len, events_cap;
};

struct sim_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx; /* ibv_create_cq_ex: begins as struct ibv_cq does (ibv_cq_ex_to_cq casts) */
	};
	struct ibv_wc cur; /* ibv_start_poll .. ibv_end_poll: the completion the read_* accessors read */
	uint32_t handle;
	struct ibv_wc *ring;
	unsigned cap, head, count; /* ring of completions received, not yet polled */
	int armed, solicited_only;
	/* extended CQs with completion timestamps (cq_ex.c): each ring entry's time (ns), the polled one's, the clock */
	uint64_t *stamps;
	uint64_t cur_stamp, clock_khz, ts_mask;
	/* extended CQs with IBV_WC_EX_WITH_TM_INFO (tm.c): each ring entry's TMH tag and app_ctx, the polled one's */
	struct ibv_wc_tm_info *tm_tags;
	struct ibv_wc_tm_info cur_tm_tag;
};

#define QPX_MAX_WR 64
#define QPX_MAX_SGE 16
struct sim_qp {
	struct ibv_qp_ex qpx; /* qpx.qp_base is the struct ibv_qp programs hold */
	uint32_t handle;
	/* ibv_wr_start .. ibv_wr_complete: the work requests built so far */
	struct ibv_send_wr wrs[QPX_MAX_WR];
	struct ibv_sge sges[QPX_MAX_WR][QPX_MAX_SGE];
	char *inline_bufs[QPX_MAX_WR];
	unsigned nwr;
	int qpx_error;
	struct wire_qp_cap cap;
	uint32_t post_rules; /* WIRE_POST_* */
	unsigned outstanding_sends; /* posted and not yet retired by the device */
	unsigned outstanding_recvs; /* receives posted to its own receive queue and not yet completed */
	struct ibv_qp_attr attr;   /* what ibv_modify_qp set, for ibv_query_qp */
	struct ibv_qp_init_attr init;
	int sq_sig_all;
};

/* client.c: the connection to the fabric server */
int rnicsim_connect(void);
int rnicsim_rpc(uint16_t op, const void *req, size_t req_len, const void *extra, size_t extra_len, void *resp,
		size_t resp_cap, size_t *resp_len);
int rnicsim_doorbell(uint16_t op, const struct iovec *iov, int iovcnt);
void rnicsim_drive(int block);
void rnicsim_sends_posted(unsigned count);
void rnicsim_idle(void);
void rnicsim_server_gone(void) __attribute__((noreturn));
void rnicsim_lock(void);
void rnicsim_unlock(void);
int rnicsim_strict(void);
void rnicsim_register_cq(struct sim_cq *cq);
void rnicsim_unregister_cq(struct sim_cq *cq);
void rnicsim_register_qp(struct sim_qp *qp);
void rnicsim_unregister_qp(struct sim_qp *qp);
struct wire_device *rnicsim_devices(unsigned *count);

/* fork.c: a control verb's hold on the connection once the process forked (-1: no fork, nothing held) */
int rnicsim_fork_lock(void);
void rnicsim_fork_unlock(int fd);
void rnicsim_locks_reset(void); /* client.c */

/* strict.c: where a verb was called from */
void rnicsim_callsite(const char *verb, char *out, size_t cap);
/* strict.c: the report of a verb refused with errno err, and why */
void rnicsim_report_refusal(const char *verb, int err, const char *why);
/* A refusal this library makes itself (no request reaches the fabric): in strict mode, reported as the fabric's are
 * (rnicsim_report_refusal), the reason formatted from fmt; nothing otherwise. Returns err. */
int rnicsim_refuse(const char *verb, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* device.c, verbs.c, post.c, poll.c, wr_api.c: the ops table */
void rnicsim_set_ops(struct verbs_context *vctx);
int rnicsim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int rnicsim_post_send_as(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, const char *verb);
/* strict.c: ibv_post_send in strict mode, which tells the server its call site first */
int rnicsim_post_send_sited(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int rnicsim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int rnicsim_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int rnicsim_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void rnicsim_cq_push(struct sim_cq *cq, const struct wire_wc *w);
void rnicsim_set_qpx_ops(struct sim_qp *qp);
/* post_rules.c: the errno of a work request at post time, after `queued` others of its call (0: it may go) */
int rnicsim_check_send(struct sim_qp *q, struct ibv_send_wr *wr, unsigned queued);
int rnicsim_check_recv(struct sim_qp *q, struct ibv_recv_wr *w, unsigned queued);
const char *rnicsim_post_why(void); /* the reason of the last refusal of this thread */
/* import.c: contexts, PDs and MRs a second context of the process may import (ibv_import_device, _pd, _mr) */
int rnicsim_cmd_fd(void);
void rnicsim_ctx_opened(struct sim_ctx *c);
int rnicsim_ctx_closing(struct sim_ctx *c); /* 1 when another context still shares the server's context */
void rnicsim_pd_created(struct sim_pd *pd);
void rnicsim_pd_gone(struct sim_pd *pd);
void rnicsim_mr_created(struct sim_mr *mr);
void rnicsim_mr_gone(struct sim_mr *mr);
/* qp_reset.c: the provider's clean of the CQs when a QP goes to RESET (WIRE_POST_RESET_CLEANS_CQ) */
void rnicsim_reset_clean_cqs(struct sim_qp *q);
uint32_t rnicsim_ctx_handle(struct ibv_context *ctx);

/* windows.c, registration.c */
void rnicsim_set_mw_ops(struct ibv_context *ctx);
void rnicsim_wire_bind(const struct ibv_send_wr *w, struct wire_send_wr *s);
void rnicsim_set_registration_ops(struct verbs_context *vctx);

/* dm.c: device memory (ibv_alloc_dm and the verbs on it); max_dm_size for ibv_query_device_ex */
void rnicsim_set_dm_ops(struct verbs_context *vctx);
uint64_t rnicsim_max_dm_size(struct ibv_context *ctx);

/* verbs.c: a CQ of the server, for ibv_create_cq and ibv_create_cq_ex */
struct sim_cq *rnicsim_create_cq(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel);
struct sim_cq *rnicsim_cq_new(struct ibv_context *ctx, uint32_t handle, uint32_t cqe, void *cq_context,
			      struct ibv_comp_channel *channel);
/* alloc_type.c: the errno of a create that mlx5's MLX_*_ALLOC_TYPE=HUGE fails on this host, else 0 */
int rnicsim_alloc_type_refuses(struct ibv_context *ctx, const char *variable);
/* the same on a completion vector, which the device checks against its num_comp_vectors */
struct sim_cq *rnicsim_create_cq_on(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel,
				    uint32_t comp_vector);
void rnicsim_set_cq_ex_ops(struct verbs_context *vctx);

/* extended.c: what the device's provider offers beyond the basic verbs, the extended parts of the ops table */
void rnicsim_set_extended_ops(struct verbs_context *vctx);
void rnicsim_extended_device_attr(struct ibv_context *ctx, struct ibv_device_attr_ex *attr);
int rnicsim_cq_caps(struct ibv_context *ctx, struct wire_cqex_caps *caps);

/* domains.c: thread and parent domains, and the buffers a parent domain's allocator gives */
int rnicsim_is_parent_domain(struct ibv_pd *pd);
int rnicsim_pd_dealloc(struct ibv_pd *pd, int *handled);
void *rnicsim_pd_bufs_get(struct ibv_pd *pd, uint64_t type, size_t size, int *err);
void rnicsim_set_domain_ops(struct verbs_context *vctx);
void rnicsim_pd_bufs_bind(void *bufs, void *obj);
void rnicsim_pd_bufs_put(void *bufs);
void rnicsim_pd_bufs_release(void *obj);
void *rnicsim_pd_qp_bufs(struct ibv_pd *pd, const struct ibv_qp_init_attr_ex *attr, int *err);
void *rnicsim_pd_srq_bufs(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge, int *err);

/* srq.c */
uint32_t rnicsim_srq_handle(struct ibv_srq *srq);
uint32_t rnicsim_srq_num(struct ibv_srq *srq);
/* a receive of the SRQ completed: its slot is free again */
void rnicsim_srq_consumed(struct ibv_srq *srq);
struct ibv_srq *rnicsim_srq_new(struct ibv_pd *pd, void *srq_context, uint32_t handle, uint32_t max_sge,
				uint32_t srq_num);
void rnicsim_set_srq_ops(struct ibv_context *ctx);
/* an SRQ of ibv_create_srq_ex the server made (XRC, TM), or NULL with errno err */
struct ibv_srq *rnicsim_srq_made(struct ibv_srq_init_attr_ex *attr, int err, uint32_t handle, uint32_t max_wr,
				 uint32_t max_sge, uint32_t srq_num, int counted);

/* tm.c: tag matching (tm_caps, TM SRQs, ibv_post_srq_ops, the TM_WC message); srq.c: a basic SRQ's granted max_wr;
 * client.c: a CQ by its handle */
void rnicsim_tm_caps(struct ibv_context *ctx, struct ibv_tm_caps *caps);
struct ibv_srq *rnicsim_create_tm_srq(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr);
void rnicsim_tm_wcs(const char *payload, size_t len);
void rnicsim_set_tm_ops(struct verbs_context *vctx);
void rnicsim_srq_granted(struct ibv_srq *srq, uint32_t max_wr);
struct sim_cq *rnicsim_cq_of(uint32_t handle);

/* verbs.c: the struct ibv_mr of an MR the server registered (released there when it cannot be had: NULL, ENOMEM) */
struct ibv_mr *rnicsim_mr_new(struct ibv_pd *pd, const struct wire_mr_resp *resp, void *addr, size_t length);
/* mr_kinds.c: ibv_alloc_null_mr in the extended ops table (ibv_reg_dmabuf_mr is exported there) */
void rnicsim_set_mr_kind_ops(struct verbs_context *vctx);

/* xrc.c: XRC domains, XRC SRQs and the XRC parts of the QP verbs */
void rnicsim_set_xrc_ops(struct verbs_context *vctx);
void rnicsim_set_xrc_qpx_ops(struct sim_qp *qp);
uint32_t rnicsim_xrcd_handle(struct ibv_xrcd *xrcd);

/* ring.c: the server's messages through shared memory */
void rnicsim_ring_offer(void);
int rnicsim_ring_active(void);
size_t rnicsim_ring_read(int sock, char *to, size_t cap);
int rnicsim_ring_pending(void);
void rnicsim_ring_wait(int sock, long timeout_ns);
void rnicsim_ring_listen(void);
int rnicsim_poll_long_wait(unsigned long reads);
/* ring.c: the doorbells (and requests) to the server through shared memory */
void rnicsim_doorbells_offer(void);
int rnicsim_doorbells_active(void);
int rnicsim_doorbells_write(int sock, const struct iovec *iov, int iovcnt);
/* fork.c: this process's id, kept across fork without a system call */
pid_t rnicsim_pid(void);

/* events.c: the thread that reads the server's messages once the program has a completion channel */
int rnicsim_events_start(void);
int rnicsim_socket(void);

uint32_t rnicsim_ah_handle(struct ibv_ah *ah);

/* carry.c: the bytes of small SENDs and WRITEs in the doorbell, and of received SENDs in PLACE messages */
#define CARRY_MAX_BYTES 512	     /* a work request this long or shorter carries its bytes */
#define CARRY_MAX_SEGS 32	     /* SGEs carried in one doorbell message */
#define CARRY_MAX_MSG_BYTES 8192 /* no carrying past this offset: those bytes stay in the first socket buffer */
struct rnicsim_carry {
	size_t at[CARRY_MAX_SEGS]; /* where in the message each SGE's bytes go */
	void *addr[CARRY_MAX_SEGS];
	size_t len[CARRY_MAX_SEGS];
	unsigned n;
};
uint32_t rnicsim_carry_len(const struct ibv_send_wr *w, size_t msg_off, const struct rnicsim_carry *c);
void rnicsim_carry_add(struct rnicsim_carry *c, size_t at, const struct ibv_send_wr *w);
int rnicsim_carry_doorbell(uint16_t op, char *msg, size_t len, const struct rnicsim_carry *c);
void rnicsim_place(const char *payload, size_t len);

#endif
