/*
 * The queue buffer allocation type of the mlx5 provider: MLX_QP_ALLOC_TYPE, MLX_CQ_ALLOC_TYPE and
 * MLX_SRQ_ALLOC_TYPE in the environment (rdma-core providers/mlx5/buf.c, mlx5_get_alloc_type) ask for the queue's
 * buffer on huge pages. HUGE allocates from the host's hugetlb pool with shmget(SHM_HUGETLB) and fails the create
 * when the pool cannot give it (no huge pages reserved, or none left); PREFER_HUGE and ALL fall back to ordinary
 * pages. The simulated queues live in the fabric, but the request is the program's: this library makes the same
 * hugetlb allocation in the program's own process, so a create fails exactly where the real provider's would, and
 * gives the pages back at once. Only a provider that reads these variables (the device profile's
 * QUEUE_ALLOC_TYPE_FROM_ENV rule: mlx5) is asked; the context's provider capabilities say so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "rnicsim_verbs.h"

#define HUGE_PAGE_BYTES (2UL << 20) /* the x86 default huge page size, which the provider asks the pool for */

int rnicsim_alloc_type_refuses(struct ibv_context *ctx, const char *variable)
{
	const char *type = getenv(variable);
	if (!type || strcmp(type, "HUGE") != 0)
		return 0;
	struct wire_cqex_caps caps;
	if (rnicsim_cq_caps(ctx, &caps) != 0 || !(caps.features & WIRE_CQEX_ALLOC_TYPE_ENV))
		return 0;
	int id = shmget(IPC_PRIVATE, HUGE_PAGE_BYTES, SHM_HUGETLB | IPC_CREAT | SHM_R | SHM_W);
	if (id < 0) /* mlx5's alloc_huge_buf failed and HUGE has no fallback: the create fails */
		return rnicsim_refuse(strstr(variable, "_CQ_") ? "ibv_create_cq" : strstr(variable, "_SRQ_")
				      ? "ibv_create_srq" : "ibv_create_qp", ENOMEM, "%s=HUGE asks the mlx5 provider for "
				      "the queue's buffer on 2 MiB huge pages and the hugetlb pool has none free "
				      "(alloc_huge_buf: no fallback for HUGE); fix: reserve huge pages "
				      "(vm.nr_hugepages), or use PREFER_HUGE, which falls back to ordinary pages",
				      variable);
	shmctl(id, IPC_RMID, NULL);
	return 0;
}
