/*
 * Refusals this library answers itself or the model answers past its own checks, for strict mode's report of each
 * (the reason in the verbs' words and the call site) and for the line every run prints when the model refuses a
 * request the verbs' checks let through. Prints one line per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0
 * when every case held.
 *
 *   cq-negative     ibv_create_cq with cqe -1                                              EINVAL
 *   mr-2^62         ibv_reg_mr of 2^62 bytes (ib_umem_get: more than UINT_MAX pages)        refused (the errno
 *   mr-2^63-1       ibv_reg_mr of 2^63 - 1 bytes                                             printed: EINVAL on
 *                                                                                             mlx5, ENOMEM on
 *                                                                                             bnxt_re)
 *   resize          ibv_resize_cq: 0 where the provider resizes a CQ, else                   EOPNOTSUPP
 *
 * Build: gcc -g -rdynamic explained_refusals.c -libverbs.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;

int main(void)
{
	struct ibv_device **list = open_first_device(&ctx, &pd);
	char *buf = aligned_alloc(4096, 4096);

	errno = 0;
	struct ibv_cq *bad = ibv_create_cq(ctx, -1, NULL, NULL, 0);
	check("cq-negative", !bad && errno == EINVAL, bad ? "created a CQ of -1 entries" : strerror(errno));

	errno = 0;
	struct ibv_mr *huge = ibv_reg_mr(pd, buf, (size_t)1 << 62, IBV_ACCESS_LOCAL_WRITE);
	check("mr-2^62", !huge && errno != 0, huge ? "registered 2^62 bytes" : strerror(errno));

	errno = 0;
	huge = ibv_reg_mr(pd, buf, (size_t)INT64_MAX, IBV_ACCESS_LOCAL_WRITE);
	check("mr-2^63-1", !huge && errno != 0, huge ? "registered 2^63 - 1 bytes" : strerror(errno));

	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) {
		printf("FAIL setup: %s\n", strerror(errno));
		return 1;
	}
	int e = ibv_resize_cq(cq, 32);
	check("resize", e == 0 || e == EOPNOTSUPP, e ? strerror(e) : "resized");
	printf("resize answered %d\n", e);

	ibv_destroy_cq(cq);
	free(buf);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
