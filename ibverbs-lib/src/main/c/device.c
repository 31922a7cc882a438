/*
 * Devices and contexts: ibv_get_device_list, ibv_open_device and the query verbs, answered by the fabric server
 * from the simulated device's profile (the attributes `rnicsim devinfo` prints).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

#undef ibv_query_port

struct sim_device {
	struct ibv_device dev;
	uint32_t index;
	uint64_t guid_be;
};

static struct sim_device *sim_devices;
static unsigned sim_device_count;

EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	if (rnicsim_connect() != 0) {
		/* no fabric: no device, as libibverbs answers on a machine without RDMA devices */
		struct ibv_device **l = calloc(1, sizeof(*l));
		if (num_devices)
			*num_devices = 0;
		return l;
	}
	rnicsim_lock();
	unsigned n;
	struct wire_device *wd = rnicsim_devices(&n);
	if (!sim_devices) {
		sim_devices = calloc(n ? n : 1, sizeof(*sim_devices));
		for (unsigned i = 0; i < n; i++) {
			struct sim_device *d = &sim_devices[i];
			d->index = i;
			d->guid_be = wd[i].node_guid_be;
			d->dev.node_type = wd[i].node_type;
			d->dev.transport_type = wd[i].transport;
			snprintf(d->dev.name, sizeof(d->dev.name), "%.63s", wd[i].name);
			snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs%u", i);
			snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "/sys/class/infiniband_verbs/uverbs%u", i);
			snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/sys/class/infiniband/%.63s", wd[i].name);
		}
		sim_device_count = n;
	}
	rnicsim_unlock();
	struct ibv_device **l = calloc(sim_device_count + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < sim_device_count; i++)
		l[i] = &sim_devices[i].dev;
	if (num_devices)
		*num_devices = sim_device_count;
	return l;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return ((struct sim_device *)device)->guid_be;
}

EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return ((struct sim_device *)device)->index;
}

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct sim_device *d = (struct sim_device *)device;
	struct wire_handle req = {.handle = d->index};
	struct wire_handle resp = {0};
	int e = rnicsim_rpc(OP_OPEN, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->handle = resp.handle;
	c->device_index = d->index;
	struct ibv_context *ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = rnicsim_cmd_fd(); /* a file of its own, which ibv_import_device finds it by (import.c) */
	ctx->async_fd = eventfd(0, EFD_CLOEXEC); /* no asynchronous event is ever raised */
	ctx->num_comp_vectors = resp.arg ? (int)resp.arg : 1; /* the device's, as OPEN answers it */
	pthread_mutex_init(&ctx->mutex, NULL);
	rnicsim_set_ops(&c->vctx);
	rnicsim_ctx_opened(c);
	return ctx;
}

static struct sim_ctx *sim_ctx(struct ibv_context *ctx)
{
	return (struct sim_ctx *)((char *)ctx - offsetof(struct sim_ctx, vctx.context));
}

uint32_t rnicsim_ctx_handle(struct ibv_context *ctx)
{
	return sim_ctx(ctx)->handle;
}

EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	struct sim_ctx *c = sim_ctx(ctx);
	struct wire_handle req = {.handle = c->handle};
	/* the server's context stays while an imported context (or the one it was imported from) shares it */
	int e = rnicsim_ctx_closing(c) ? 0 : rnicsim_rpc(OP_CLOSE_CTX, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e) {
		rnicsim_ctx_opened(c);
		return e;
	}
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	if (ctx->cmd_fd >= 0)
		close(ctx->cmd_fd);
	free(c);
	return 0;
}

static int query_device_values(struct ibv_context *ctx, char *fw_ver, uint64_t *v)
{
	struct wire_handle req = {.handle = sim_ctx(ctx)->handle};
	char resp[64 + DA_COUNT * 8];
	int e = rnicsim_rpc(OP_QUERY_DEVICE, &req, sizeof(req), NULL, 0, resp, sizeof(resp), NULL);
	if (e)
		return e;
	memcpy(fw_ver, resp, 64);
	memcpy(v, resp + 64, DA_COUNT * 8);
	return 0;
}

static void fill_device_attr(struct ibv_device_attr *a, const char *fw, const uint64_t *v)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%.63s", fw);
	a->node_guid = htobe64(v[DA_NODE_GUID]);
	a->sys_image_guid = htobe64(v[DA_SYS_IMAGE_GUID]);
	a->max_mr_size = v[DA_MAX_MR_SIZE];
	a->page_size_cap = v[DA_PAGE_SIZE_CAP];
	a->vendor_id = v[DA_VENDOR_ID];
	a->vendor_part_id = v[DA_VENDOR_PART_ID];
	a->hw_ver = v[DA_HW_VER];
	a->max_qp = v[DA_MAX_QP];
	a->max_qp_wr = v[DA_MAX_QP_WR];
	a->device_cap_flags = v[DA_DEVICE_CAP_FLAGS];
	a->max_sge = v[DA_MAX_SGE];
	a->max_sge_rd = v[DA_MAX_SGE_RD];
	a->max_cq = v[DA_MAX_CQ];
	a->max_cqe = v[DA_MAX_CQE];
	a->max_mr = v[DA_MAX_MR];
	a->max_pd = v[DA_MAX_PD];
	a->max_qp_rd_atom = v[DA_MAX_QP_RD_ATOM];
	a->max_qp_init_rd_atom = v[DA_MAX_QP_INIT_RD_ATOM];
	a->max_res_rd_atom = v[DA_MAX_RES_RD_ATOM];
	a->max_mw = v[DA_MAX_MW];
	a->atomic_cap = v[DA_ATOMIC_CAP];
	a->max_srq = v[DA_MAX_SRQ];
	a->max_srq_wr = v[DA_MAX_SRQ_WR];
	a->max_srq_sge = v[DA_MAX_SRQ_SGE];
	a->max_mcast_grp = v[DA_MAX_MCAST_GRP];
	a->max_mcast_qp_attach = v[DA_MAX_MCAST_QP_ATTACH];
	a->max_total_mcast_qp_attach = v[DA_MAX_TOTAL_MCAST_QP_ATTACH];
	a->max_ah = v[DA_MAX_AH];
	a->max_pkeys = v[DA_MAX_PKEYS];
	a->local_ca_ack_delay = v[DA_LOCAL_CA_ACK_DELAY];
	a->phys_port_cnt = v[DA_PHYS_PORT_CNT];
}

EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	char fw[64];
	uint64_t v[DA_COUNT];
	int e = query_device_values(ctx, fw, v);
	if (e)
		return e;
	fill_device_attr(attr, fw, v);
	return 0;
}

static int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	char fw[64];
	uint64_t v[DA_COUNT];
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	int e = query_device_values(ctx, fw, v);
	if (e)
		return e;
	struct ibv_device_attr_ex ex;
	memset(&ex, 0, sizeof(ex));
	fill_device_attr(&ex.orig_attr, fw, v);
	ex.phys_port_cnt_ex = v[DA_PHYS_PORT_CNT]; /* the full count; under 256 it equals phys_port_cnt */
	/* the kernel's ib_uverbs_ex_query_device answers the device's whole device_cap_flags here */
	ex.device_cap_flags_ex = v[DA_DEVICE_CAP_FLAGS];
	ex.odp_caps.general_caps = v[DA_ODP_GENERAL_CAPS];
	ex.odp_caps.per_transport_caps.rc_odp_caps = v[DA_ODP_RC_CAPS];
	rnicsim_extended_device_attr(ctx, &ex); /* the completion clock (extended.c) */
	ex.max_dm_size = rnicsim_max_dm_size(ctx);
	ex.odp_caps.per_transport_caps.uc_odp_caps = v[DA_ODP_UC_CAPS];
	ex.odp_caps.per_transport_caps.ud_odp_caps = v[DA_ODP_UD_CAPS];
	ex.xrc_odp_caps = v[DA_ODP_XRC_CAPS];
	memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
	return 0;
}

static int query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr, size_t attr_size)
{
	struct wire_query_gid req = {.ctx = sim_ctx(ctx)->handle, .port = port};
	uint64_t v[PA_COUNT];
	int e = rnicsim_rpc(OP_QUERY_PORT, &req, sizeof(req), NULL, 0, v, sizeof(v), NULL);
	if (e)
		return e;
	struct ibv_port_attr a;
	memset(&a, 0, sizeof(a));
	a.state = v[PA_STATE];
	a.max_mtu = v[PA_MAX_MTU];
	a.active_mtu = v[PA_ACTIVE_MTU];
	a.gid_tbl_len = v[PA_GID_TBL_LEN];
	a.port_cap_flags = v[PA_PORT_CAP_FLAGS];
	a.max_msg_sz = v[PA_MAX_MSG_SZ];
	a.pkey_tbl_len = v[PA_PKEY_TBL_LEN];
	a.link_layer = v[PA_LINK_LAYER];
	a.lid = v[PA_LID];
	a.sm_lid = v[PA_LINK_LAYER] == IBV_LINK_LAYER_INFINIBAND ? 1 : 0;
	a.lmc = 0;
	a.max_vl_num = 4;
	a.active_width = v[PA_ACTIVE_WIDTH];
	a.active_speed = v[PA_ACTIVE_SPEED];
	a.phys_state = a.state == IBV_PORT_ACTIVE ? 5 : 3; /* LinkUp, Disabled */
	a.bad_pkey_cntr = 0;
	a.qkey_viol_cntr = 0;
	a.subnet_timeout = 18;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

EXPORT int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	/* the exported symbol fills the older struct, without port_cap_flags2 and later fields; programs built with
	 * <infiniband/verbs.h> reach query_port of the ops table instead */
	return query_port(ctx, port, (struct ibv_port_attr *)attr, offsetof(struct ibv_port_attr, port_cap_flags2));
}

/* One entry of the port's GID table with its type, as the device's table holds it (sim-nic GidTable): ENODATA for an
 * empty entry. */
static int query_gid_entry(struct ibv_context *ctx, uint32_t port, uint32_t index, struct wire_gid *out)
{
	struct wire_query_gid req = {.ctx = sim_ctx(ctx)->handle, .port = port, .index = index};
	memset(out, 0, sizeof(*out));
	return rnicsim_rpc(OP_QUERY_GID, &req, sizeof(req), NULL, 0, out, sizeof(*out), NULL);
}

EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	struct wire_gid g;
	int e = query_gid_entry(ctx, port, (uint32_t)index, &g);
	if (e == ENODATA) {
		memset(gid, 0, sizeof(*gid)); /* an empty entry of the table reads as zeros */
		return 0;
	}
	if (e) {
		errno = e;
		return -1;
	}
	memcpy(gid->raw, g.raw, 16);
	return 0;
}

EXPORT int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index, struct ibv_gid_entry *entry,
			     uint32_t flags, size_t entry_size)
{
	if (flags)
		return EINVAL;
	struct wire_gid g;
	int err = query_gid_entry(ctx, port, index, &g);
	if (err)
		return err; /* ENODATA for an empty entry */
	struct ibv_gid_entry e;
	memset(&e, 0, sizeof(e));
	memcpy(e.gid.raw, g.raw, 16);
	e.gid_type = g.gid_type; /* IBV_GID_TYPE_IB, _ROCE_V1 or _ROCE_V2, as the table's entry is */
	e.gid_index = index;
	e.port_num = port;
	e.ndev_ifindex = 0;
	memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
	return 0;
}

/* A private symbol (rdma-core's driver.h, not installed) that ibv_devinfo calls to print each GID's type: 0 is
 * IB/RoCE v1, 1 RoCE v2, as the kernel's gid_attrs/types files name them (an IB or iWARP entry reads as 0, as
 * rdma-core answers when the sysfs file is missing). */
EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index, int *type)
{
	struct wire_gid g;
	int e = query_gid_entry(ctx, port, index, &g);
	if (e && e != ENODATA) {
		errno = e;
		return -1;
	}
	*type = !e && g.gid_type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
	return 0;
}

EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries, size_t max_entries,
				    uint32_t flags, size_t entry_size)
{
	struct ibv_device_attr da;
	if (flags || max_entries == 0)
		return -EINVAL; /* the kernel's UVERBS_METHOD_QUERY_GID_TABLE refuses a buffer of 0 entries */
	int e = ibv_query_device(ctx, &da);
	if (e)
		return -e;
	size_t n = 0;
	for (uint8_t port = 1; port <= da.phys_port_cnt; port++) {
		struct ibv_port_attr pa;
		if (query_port(ctx, port, &pa, sizeof(pa)) != 0)
			continue;
		for (int i = 0; i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry one;
			if (_ibv_query_gid_ex(ctx, port, i, &one, 0, sizeof(one)) != 0)
				break; /* the valid entries fill the table from index 0 */
			if (n == max_entries)
				return -EINVAL; /* rdma_query_gid_table: more valid GIDs than room */
			memcpy((char *)entries + n * entry_size, &one,
			       entry_size < sizeof(one) ? entry_size : sizeof(one));
			n++;
		}
	}
	return n;
}

EXPORT int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	/* rdma-core reads the sysfs file ports/PORT/pkeys/INDEX: a port or an index with no file fails as the open does,
	 * ENOENT; index 0 holds the default partition with full membership, the other entries are empty */
	struct ibv_port_attr pa;
	if (index < 0 || query_port(ctx, port, &pa, sizeof(pa)) != 0 || (uint32_t)index >= pa.pkey_tbl_len) {
		errno = ENOENT;
		return -1;
	}
	*pkey = htobe16(index == 0 ? 0xffff : 0);
	return 0;
}

EXPORT int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	return be16toh(pkey) == 0xffff ? 0 : -1;
}

static struct ibv_qp *create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *rnicsim_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);

static struct ibv_qp *create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	return rnicsim_create_qp_ex(ctx, attr);
}

void rnicsim_set_ops(struct verbs_context *vctx)
{
	struct ibv_context *ctx = &vctx->context;
	ctx->ops.poll_cq = rnicsim_poll_cq;
	ctx->ops.req_notify_cq = rnicsim_req_notify_cq;
	ctx->ops.post_send = rnicsim_strict() ? rnicsim_post_send_sited : rnicsim_post_send;
	ctx->ops.post_recv = rnicsim_post_recv;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	vctx->sz = sizeof(*vctx);
	vctx->query_device_ex = query_device_ex;
	vctx->query_port = query_port;
	vctx->create_qp_ex = create_qp_ex;
	rnicsim_set_mw_ops(ctx);
	rnicsim_set_registration_ops(vctx);
	rnicsim_set_dm_ops(vctx);
	rnicsim_set_mr_kind_ops(vctx);
	rnicsim_set_cq_ex_ops(vctx);
	rnicsim_set_srq_ops(ctx);
	rnicsim_set_xrc_ops(vctx);
}
