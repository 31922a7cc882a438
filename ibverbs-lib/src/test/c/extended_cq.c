/*
 * Extended CQs, ibv_resize_cq, ibv_query_rt_values_ex, thread and parent domains, on the device of the profile named
 * by argv[1] (mlx5: all of them; rxe: extended CQs with the standard fields and resize only), each with what that
 * device's provider answers. Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every
 * case got the expected answer.
 *
 *   clock        ibv_query_device_ex: hca_core_clock, completion_timestamp_mask     mlx5 156250 kHz; rxe 0
 *   ts           ibv_create_cq_ex with COMPLETION_TIMESTAMP and _WALLCLOCK          mlx5: the two SENDs' times, in
 *                order, the cycles matching the ns at hca_core_clock; rxe: NULL, EOPNOTSUPP
 *   legacy       ibv_poll_cq on ibv_cq_ex_to_cq of an extended CQ                     the completion, its fields
 *   rt-values    ibv_query_rt_values_ex RAW_CLOCK after the completions            mlx5: at or after the last CQE's
 *                time; another comp_mask bit EINVAL; rxe: EOPNOTSUPP
 *   resize       ibv_resize_cq 3 -> 1 -> 7, then below the completions waiting, then 0 and past max_cqe
 *                1 and 7 granted; EINVAL thrice, the size kept; after polling, 1 granted
 *   td           ibv_alloc_td with a comp_mask; a TD; ibv_dealloc_td while a parent domain holds it
 *                EINVAL; a TD; EBUSY (rxe: EOPNOTSUPP)
 *   pd           ibv_alloc_parent_domain without a PD; with a TD, allocators and pd_context   EINVAL; a parent domain
 *   pd-alloc     a QP, an SRQ and an extended CQ of the parent domain: the allocator is called for each buffer
 *                (QP, SRQ, CQ and doorbell record types, page-aligned) with the pd_context; a SEND between two
 *                QPs of the parent domain, on memory registered in it, completes; each buffer is freed once, with
 *                the pointer the allocator gave, when its object is destroyed
 *   pd-busy      ibv_dealloc_pd of the parent domain while a QP uses it, of its protection domain   EBUSY, EBUSY
 *   pd-cq        ibv_create_cq_ex with IBV_CQ_INIT_ATTR_MASK_PD naming a plain PD    NULL, EINVAL
 *   pd-nomem     an allocator that gives NULL: ibv_create_qp                          NULL, ENOMEM, nothing created
 *
 * Build: gcc -g extended_cq.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int mlx5;

#define RES(n) ((uint64_t)RDMA_DRIVER_MLX5 << 32 | (n))
#define MAX_ALLOCS 32

/* What the test's allocator was asked and gave. */
static struct {
	void *ptr;
	size_t size, alignment;
	uint64_t type;
	void *pd_context;
	int freed;
} allocs[MAX_ALLOCS];
static int nallocs, free_errors, refuse;

static void *test_alloc(struct ibv_pd *p, void *pd_context, size_t size, size_t alignment, uint64_t type)
{
	if (refuse || nallocs == MAX_ALLOCS)
		return NULL;
	void *ptr = NULL;
	if (posix_memalign(&ptr, alignment, size))
		return NULL;
	allocs[nallocs++] = (typeof(allocs[0])){ptr, size, alignment, type, pd_context, 0};
	return ptr;
}

static void test_free(struct ibv_pd *p, void *pd_context, void *ptr, uint64_t type)
{
	for (int i = 0; i < nallocs; i++)
		if (allocs[i].ptr == ptr && allocs[i].type == type && !allocs[i].freed) {
			allocs[i].freed = 1;
			free(ptr);
			return;
		}
	free_errors++;
}

static int allocated(uint64_t type, int *freed)
{
	int n = 0;
	*freed = 0;
	for (int i = 0; i < nallocs; i++)
		if (allocs[i].type == type) {
			n++;
			*freed += allocs[i].freed;
		}
	return n;
}

static struct ibv_qp *rc_qp(struct ibv_pd *in, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = srq ? 0 : 8, .max_send_sge = 1,
					      .max_recv_sge = 1}};
	return ibv_create_qp(in, &ia);
}

/* A SEND of len bytes from a to b (b's receive posted first); 0 once both completed on cq. */
static int send_one(struct ibv_qp *a, struct ibv_qp *b, struct ibv_mr *mr, uint32_t len, uint64_t id)
{
	struct ibv_sge rs = {.addr = (uintptr_t)mr->addr + 2048, .length = 1024, .lkey = mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = id + 1, .sg_list = &rs, .num_sge = 1}, *rbad;
	struct ibv_sge ss = {.addr = (uintptr_t)mr->addr, .length = len, .lkey = mr->lkey};
	struct ibv_send_wr swr = {.wr_id = id, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED}, *sbad;
	if (b->srq ? ibv_post_srq_recv(b->srq, &rwr, &rbad) : ibv_post_recv(b, &rwr, &rbad))
		return -1;
	return ibv_post_send(a, &swr, &sbad);
}

static union ibv_gid gid;
static int roce;

/* loopback_connect, with a global route to the port's own GID on RoCE (rxe), where the port has no LID */
static int connect_to(struct ibv_qp *qp, uint32_t remote_qpn)
{
	if (!roce)
		return connect_qp(qp, remote_qpn);
	return loopback_connect_path(qp, remote_qpn, 0, &gid, IBV_MTU_1024, qp_access);
}

static void connect_pair(struct ibv_qp *a, struct ibv_qp *b)
{
	if (!a || !b || connect_to(a, b->qp_num) || connect_to(b, a->qp_num)) {
		perror("setting up a QP pair");
		exit(2);
	}
}

/* Polls n completions from an extended CQ, their times (ns) and cycles into ns and cyc unless ns is NULL. */
static int poll_ex(struct ibv_cq_ex *cq, int n, uint64_t *ns, uint64_t *cyc, int *ok)
{
	struct ibv_poll_cq_attr pa = {0};
	int got = 0, r;
	*ok = 1;
	while ((r = ibv_start_poll(cq, &pa)) == ENOENT)
		;
	while (r == 0) {
		*ok &= cq->status == IBV_WC_SUCCESS;
		if (got < n && ns) {
			ns[got] = ibv_wc_read_completion_wallclock_ns(cq);
			cyc[got] = ibv_wc_read_completion_ts(cq);
		}
		got++;
		if (got == n)
			break;
		while ((r = ibv_next_poll(cq)) == ENOENT)
			;
	}
	ibv_end_poll(cq);
	return got;
}

static uint64_t clock_khz;

static void clock_and_ts_cases(struct ibv_mr *mr)
{
	struct ibv_device_attr_ex ax;
	memset(&ax, 0, sizeof(ax));
	int e = ibv_query_device_ex(ctx, NULL, &ax);
	clock_khz = ax.hca_core_clock;
	char what[160];
	snprintf(what, sizeof(what), "hca_core_clock %llu kHz, completion_timestamp_mask 0x%llx",
		 (unsigned long long)ax.hca_core_clock, (unsigned long long)ax.completion_timestamp_mask);
	check("clock", e == 0 && (mlx5 ? ax.hca_core_clock == 156250 && ax.completion_timestamp_mask == 0x7fffffffffffffffULL
				       : ax.hca_core_clock == 0 && ax.completion_timestamp_mask == 0), what);

	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
								     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK};
	errno = 0;
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	if (!mlx5) {
		check("ts", cqx == NULL && errno == EOPNOTSUPP, "completion timestamps on rxe: NULL with EOPNOTSUPP");
		return;
	}
	check("ts", cqx != NULL, "ibv_create_cq_ex with COMPLETION_TIMESTAMP and COMPLETION_TIMESTAMP_WALLCLOCK");
	if (!cqx)
		return;
	struct ibv_qp *a = rc_qp(pd, ibv_cq_ex_to_cq(cqx), NULL), *b = rc_qp(pd, ibv_cq_ex_to_cq(cqx), NULL);
	connect_pair(a, b);
	uint64_t ns[4], cyc[4];
	int ok;
	if (send_one(a, b, mr, 64, 10) || poll_ex(cqx, 2, ns, cyc, &ok) != 2 || send_one(a, b, mr, 64, 20) ||
	    poll_ex(cqx, 2, ns + 2, cyc + 2, &ok) != 2) {
		perror("two SENDs");
		exit(2);
	}
	check("ts", ok, "four successful completions read with ibv_start_poll");
	check("ts", ns[0] > 0 && ns[0] <= ns[1] && ns[1] <= ns[2] && ns[2] <= ns[3] && ns[2] > ns[0],
	      "the wallclock times grow from one completion to the next (the simulated clock)");
	int match = 1;
	for (int i = 0; i < 4; i++)
		match &= cyc[i] == ns[i] / 1000000 * clock_khz + ns[i] % 1000000 * clock_khz / 1000000;
	check("ts", match, "read_completion_ts gives the same times in cycles of hca_core_clock");

	/* the legacy poll on the same CQ */
	if (send_one(a, b, mr, 48, 30)) {
		perror("a SEND");
		exit(2);
	}
	struct ibv_wc wc[2];
	int n = 0;
	while (n < 2) {
		int r = ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 2 - n, wc + n);
		if (r < 0)
			break;
		n += r;
	}
	check("legacy", n == 2 && wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS &&
				((wc[0].wr_id == 30 && wc[1].wr_id == 31 && wc[1].byte_len == 48) ||
				 (wc[1].wr_id == 30 && wc[0].wr_id == 31 && wc[0].byte_len == 48)),
	      "ibv_poll_cq on ibv_cq_ex_to_cq: the SEND and its RECV of 48 bytes");

	struct ibv_values_ex v = {.comp_mask = IBV_VALUES_MASK_RAW_CLOCK};
	e = ibv_query_rt_values_ex(ctx, &v);
	check("rt-values", e == 0 && v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK && v.raw_clock.tv_sec == 0 &&
				   (uint64_t)v.raw_clock.tv_nsec >= cyc[3],
	      "RAW_CLOCK: cycles of hca_core_clock in tv_nsec, at or after the last completion's timestamp");
	v.comp_mask = 1 << 5;
	check("rt-values", ibv_query_rt_values_ex(ctx, &v) == EINVAL, "an unknown comp_mask bit: EINVAL");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

static void resize_cases(struct ibv_mr *mr)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 3, NULL, NULL, 0);
	struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq || !scq) {
		perror("ibv_create_cq");
		exit(2);
	}
	int e = ibv_resize_cq(cq, 1);
	check("resize", e == 0 && cq->cqe == 1, "3 -> 1: granted 1 (a power of two above the count, less one)");
	e = ibv_resize_cq(cq, 7);
	check("resize", e == 0 && cq->cqe == 7, "1 -> 7: granted 7");
	e = ibv_resize_cq(cq, 5);
	check("resize", e == 0 && cq->cqe == 7, "7 -> 5: rounded to the size it has, kept");
	struct ibv_qp_init_attr ia = {.send_cq = scq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia), *b = ibv_create_qp(pd, &ia);
	connect_pair(a, b);
	for (int i = 0; i < 4; i++)
		if (send_one(a, b, mr, 16, 100 + 2 * i)) {
			perror("a SEND");
			exit(2);
		}
	e = ibv_resize_cq(cq, 3);
	check("resize", e == EINVAL && cq->cqe == 7, "to 3 with 4 completions waiting: EINVAL, 7 entries kept");
	check("resize", ibv_resize_cq(cq, 0) == EINVAL, "to 0: EINVAL");
	struct ibv_device_attr da;
	ibv_query_device(ctx, &da);
	check("resize", ibv_resize_cq(cq, da.max_cqe + 1) == EINVAL && cq->cqe == 7, "past max_cqe: EINVAL");
	struct ibv_wc wc[8];
	int n = 0;
	while (n < 4)
		n += ibv_poll_cq(cq, 8, wc + n);
	check("resize", n == 4 && wc[3].status == IBV_WC_SUCCESS, "the 4 RECVs survived the refused resizes");
	e = ibv_resize_cq(cq, 1);
	check("resize", e == 0 && cq->cqe == 1, "once polled: 7 -> 1 granted");
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(scq);
}

static void domain_cases(void)
{
	struct ibv_td_init_attr ta = {.comp_mask = 1};
	errno = 0;
	struct ibv_td *td = ibv_alloc_td(ctx, &ta);
	if (!mlx5) {
		check("td", td == NULL && errno == EOPNOTSUPP, "ibv_alloc_td on rxe: NULL with EOPNOTSUPP");
		struct ibv_parent_domain_init_attr pa = {.pd = pd};
		errno = 0;
		check("pd", ibv_alloc_parent_domain(ctx, &pa) == NULL && errno == EOPNOTSUPP,
		      "ibv_alloc_parent_domain on rxe: NULL with EOPNOTSUPP");
		return;
	}
	check("td", td == NULL && errno == EINVAL, "a comp_mask: NULL with EINVAL");
	ta.comp_mask = 0;
	td = ibv_alloc_td(ctx, &ta);
	check("td", td != NULL && td->context == ctx, "ibv_alloc_td");

	struct ibv_parent_domain_init_attr pa = {.pd = NULL};
	errno = 0;
	check("pd", ibv_alloc_parent_domain(ctx, &pa) == NULL && errno == EINVAL, "no protection domain: NULL, EINVAL");
	static int cookie;
	pa = (struct ibv_parent_domain_init_attr){.pd = pd, .td = td, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
									     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
						  .alloc = test_alloc, .free = test_free, .pd_context = &cookie};
	struct ibv_pd *par = ibv_alloc_parent_domain(ctx, &pa);
	check("pd", par != NULL && par->context == ctx, "a parent domain with a TD, allocators and a pd_context");
	if (!par)
		return;
	check("td", ibv_dealloc_td(td) == EBUSY, "ibv_dealloc_td while the parent domain holds it: EBUSY");

	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
					 .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = par};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(par, &sa);
	struct ibv_qp *a = cqx ? rc_qp(par, ibv_cq_ex_to_cq(cqx), NULL) : NULL;
	struct ibv_qp *b = cqx && srq ? rc_qp(par, ibv_cq_ex_to_cq(cqx), srq) : NULL;
	connect_pair(a, b);
	char *buf = aligned_alloc(4096, 4096);
	memset(buf, 'p', 4096);
	struct ibv_mr *mr = ibv_reg_mr(par, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	check("pd-alloc", mr != NULL && mr->pd == par, "ibv_reg_mr in the parent domain");
	int ok = 0;
	check("pd-alloc", mr && send_one(a, b, mr, 100, 40) == 0 && poll_ex(cqx, 2, NULL, NULL, &ok) == 2 && ok &&
				  buf[2048] == 'p',
	      "a SEND between two QPs of the parent domain (one on its SRQ) completes, its bytes placed");
	int f, page = (int)sysconf(_SC_PAGESIZE), aligned = 1, contexts = 1;
	for (int i = 0; i < nallocs; i++) {
		aligned &= allocs[i].type == RES(3) ? allocs[i].alignment == 8 && allocs[i].size == 8
						    : allocs[i].alignment == (size_t)page && allocs[i].size % page == 0;
		contexts &= allocs[i].pd_context == &cookie;
	}
	char what[200];
	snprintf(what, sizeof(what), "the allocator gave %d QP, %d SRQ, %d CQ and %d doorbell buffers",
		 allocated(RES(1), &f), allocated(RES(4), &f), allocated(RES(5), &f), allocated(RES(3), &f));
	check("pd-alloc", allocated(RES(1), &f) == 2 && allocated(RES(4), &f) == 1 && allocated(RES(5), &f) == 1 &&
				  allocated(RES(3), &f) == 4, what);
	check("pd-alloc", aligned && contexts, "page-aligned buffers (8-byte doorbell records), each with the pd_context");

	check("pd-busy", ibv_dealloc_pd(par) == EBUSY, "ibv_dealloc_pd of the parent domain while a QP uses it: EBUSY");
	check("pd-busy", ibv_dealloc_pd(pd) == EBUSY, "ibv_dealloc_pd of its protection domain: EBUSY");
	ibv_destroy_qp(a);
	check("pd-alloc", allocated(RES(1), &f) == 2 && f == 1, "ibv_destroy_qp gave its QP buffer to free()");
	ibv_destroy_qp(b);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	ibv_dereg_mr(mr);
	int all = 1;
	for (int i = 0; i < nallocs; i++)
		all &= allocs[i].freed;
	check("pd-alloc", all && free_errors == 0, "every buffer freed once, with the pointer the allocator gave");

	ca.parent_domain = pd;
	errno = 0;
	check("pd-cq", ibv_create_cq_ex(ctx, &ca) == NULL && errno == EINVAL,
	      "IBV_CQ_INIT_ATTR_MASK_PD naming a plain PD: NULL, EINVAL");
	refuse = 1;
	int before = nallocs;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	errno = 0;
	struct ibv_qp *q = rc_qp(par, cq, NULL);
	check("pd-nomem", q == NULL && errno == ENOMEM && nallocs == before,
	      "an allocator that gives NULL: ibv_create_qp NULL, ENOMEM");
	ibv_destroy_cq(cq);
	refuse = 0;
	check("pd", ibv_dealloc_pd(par) == 0, "ibv_dealloc_pd of the parent domain once its objects are gone: 0");
	check("td", ibv_dealloc_td(td) == 0, "ibv_dealloc_td once no parent domain holds it: 0");
	free(buf);
}

int main(int argc, char **argv)
{
	mlx5 = argc > 1 && strcmp(argv[1], "mlx5") == 0;
	struct ibv_device **list = open_first_device(&ctx, &pd);
	struct ibv_port_attr port;
	roce = ibv_query_port(ctx, 1, &port) == 0 && port.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (roce && ibv_query_gid(ctx, 1, 0, &gid)) {
		perror("ibv_query_gid");
		return 2;
	}
	char *buf = aligned_alloc(4096, 4096);
	memset(buf, 's', 4096);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		perror("ibv_reg_mr");
		return 2;
	}
	clock_and_ts_cases(mr);
	resize_cases(mr);
	domain_cases();
	if (!mlx5) {
		struct ibv_values_ex v = {.comp_mask = IBV_VALUES_MASK_RAW_CLOCK};
		check("rt-values", ibv_query_rt_values_ex(ctx, &v) == EOPNOTSUPP, "rxe has no query_rt_values: EOPNOTSUPP");
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
