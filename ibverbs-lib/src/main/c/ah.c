/*
 * Address handles (ibv_create_ah(3), ibv_destroy_ah): the path a UD send names in wr.ud.ah. The simulated device
 * keeps the address vector (ProtectionDomain.createAh); the library keeps its handle. ibv_init_ah_from_wc and
 * ibv_create_ah_from_wc build the path back to the sender of a received datagram from its completion and GRH.
 */
#define _GNU_SOURCE
#include "rnicsim_verbs.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sim_ah {
	struct ibv_ah ah;
	uint32_t handle;
};

uint32_t rnicsim_ah_handle(struct ibv_ah *ah)
{
	return ah ? ((struct sim_ah *)ah)->handle : 0;
}

EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	if (!pd || !attr) {
		errno = EINVAL;
		return NULL;
	}
	struct wire_create_ah req = {.pd = ((struct sim_pd *)pd)->handle,
				     .dlid = attr->dlid,
				     .is_global = attr->is_global,
				     .port_num = attr->port_num,
				     .sgid_index = attr->grh.sgid_index};
	memcpy(req.dgid, attr->grh.dgid.raw, 16);
	struct wire_handle resp = {0, 0};
	int e = rnicsim_rpc(OP_CREATE_AH, &req, sizeof(req), NULL, 0, &resp, sizeof(resp), NULL);
	if (e) {
		errno = e;
		return NULL;
	}
	struct sim_ah *a = calloc(1, sizeof(*a));
	if (!a) {
		errno = ENOMEM;
		return NULL;
	}
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->ah.handle = resp.handle;
	a->handle = resp.handle;
	return &a->ah;
}

EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	struct wire_handle req = {.handle = rnicsim_ah_handle(ah)};
	int e = rnicsim_rpc(OP_DESTROY_AH, &req, sizeof(req), NULL, 0, NULL, 0, NULL);
	if (e)
		return e;
	free(ah);
	return 0;
}

/* The GRH's next header for IB and RoCE v1 (the BTH follows), and UDP for RoCE v2 (IBA annex A17). */
#define NEXT_HDR_BTH 0x1b
#define NEXT_HDR_UDP 17
enum gid_kind { GID_IB_ROCE_V1, GID_ROCE_V2 };

/*
 * The index of a GID of the given kind in the port's table, or -1 with errno EINVAL when the table has none (libibverbs
 * walks the table with ibv_query_gid until an entry matches; the walk stops at the table's end, gid_tbl_len, here).
 * Each entry's kind is its gid_type, as ibv_query_gid_ex reports it (device.c).
 */
static int find_gid_index(struct ibv_context *ctx, uint8_t port, const uint8_t *gid, enum gid_kind kind)
{
	struct ibv_port_attr pa;
	if (ibv_query_port(ctx, port, &pa)) {
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry g;
		if (_ibv_query_gid_ex(ctx, port, i, &g, 0, sizeof(g)))
			break;
		enum gid_kind entry_kind = g.gid_type == IBV_GID_TYPE_ROCE_V2 ? GID_ROCE_V2 : GID_IB_ROCE_V1;
		if (entry_kind == kind && !memcmp(g.gid.raw, gid, 16))
			return i;
	}
	errno = EINVAL;
	return -1;
}

/* RoCE v2 over IPv4 puts a 20-byte IPv4 header in the last 20 bytes of the 40: a valid one has IHL 5 and its checksum. */
static int holds_ipv4_header(const uint8_t *h)
{
	if ((h[0] >> 4) != 4 || (h[0] & 0xf) != 5)
		return 0;
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * ibv_init_ah_from_wc(3): the path back to the sender of a received message. Without IBV_WC_GRH the sender's LID
 * (wc->slid), its service level and path bits; with it also the GRH's source GID as the destination, the local GID
 * index of the GRH's destination GID (its kind from the GRH: next header 0x1B for IB and RoCE v1, UDP for RoCE v2; an
 * IPv4 header for RoCE v2 over IPv4), its hop limit and traffic class, as libibverbs' verbs.c builds it. A multicast
 * destination is refused (EINVAL), as is a GRH of another protocol (EPROTONOSUPPORT): -1 with errno.
 */
EXPORT int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num, struct ibv_wc *wc, struct ibv_grh *grh,
			       struct ibv_ah_attr *ah_attr)
{
	memset(ah_attr, 0, sizeof(*ah_attr));
	uint32_t vtf = grh ? be32toh(grh->version_tclass_flow) : 0;
	ah_attr->grh.flow_label = vtf & 0xfffff;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	if (!grh) {
		errno = EINVAL;
		return -1;
	}
	ah_attr->is_global = 1;
	const uint8_t *ip4 = (const uint8_t *)grh + 20;
	int version = (vtf >> 28) & 0xf;
	if (holds_ipv4_header(ip4) || (version != 6 && (ip4[0] >> 4) == 4)) {
		if ((ip4[16] & 0xf0) == 0xe0) { /* a class D (multicast) destination */
			errno = EINVAL;
			return -1;
		}
		uint8_t local[16] = {0}, remote[16] = {0};
		local[10] = local[11] = remote[10] = remote[11] = 0xff; /* ::ffff:a.b.c.d */
		memcpy(local + 12, ip4 + 16, 4);
		memcpy(remote + 12, ip4 + 12, 4);
		int index = find_gid_index(ctx, port_num, local, GID_ROCE_V2);
		if (index < 0)
			return -1;
		memcpy(ah_attr->grh.dgid.raw, remote, 16);
		ah_attr->grh.sgid_index = (uint8_t)index;
		ah_attr->grh.hop_limit = ip4[8];
		ah_attr->grh.traffic_class = ip4[1];
		return 0;
	}
	if (version != 6) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (grh->dgid.raw[0] == 0xff) { /* multicast: no GID of the table to answer from */
		errno = EINVAL;
		return -1;
	}
	enum gid_kind kind;
	if (grh->next_hdr == NEXT_HDR_UDP)
		kind = GID_ROCE_V2;
	else if (grh->next_hdr == NEXT_HDR_BTH)
		kind = GID_IB_ROCE_V1;
	else {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	int index = find_gid_index(ctx, port_num, grh->dgid.raw, kind);
	if (index < 0)
		return -1;
	ah_attr->grh.dgid = grh->sgid;
	ah_attr->grh.sgid_index = (uint8_t)index;
	ah_attr->grh.hop_limit = grh->hop_limit;
	ah_attr->grh.traffic_class = (vtf >> 20) & 0xff;
	return 0;
}

/* ibv_create_ah_from_wc(3): ibv_init_ah_from_wc, then ibv_create_ah; NULL with errno when either fails. */
EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
					    uint8_t port_num)
{
	struct ibv_ah_attr attr;
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
