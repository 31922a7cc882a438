/*
 * ibv_open_qp(3): a second context of the process opens the XRC target QP the first one made, by its number, in the
 * XRC domain both opened through one file, with what the kernel and the providers answer, checked. Prints one line
 * per case ("ok CASE: ..." or "FAIL CASE: ...") and exits 0 when every case got the expected answer.
 *
 *   open        the target QP's number in the shared domain                 a QP of that number, type XRC_RECV
 *   shared      INIT through the opened handle                              the maker's handle queries INIT
 *   bad-num     a number that names no target QP of the domain              NULL, EINVAL (ib_open_qp)
 *   bad-xrcd    the right number in another domain (opened without a file)  NULL, EINVAL
 *   bad-type    qp_type IBV_QPT_RC                                          NULL, EINVAL
 *   bad-mask    no IBV_QP_OPEN_ATTR_TYPE; a bit past it                     NULL, EINVAL; NULL, EOPNOTSUPP
 *   close       ibv_destroy_qp on the opened handle                         0, the maker's QP lives on
 *   maker-first the maker destroys its handle while another is open          0; the QP lives until the last
 *                                                                           handle goes, then EINVAL
 *   no-xrc      a device without IBV_DEVICE_XRC (no open_qp in the provider) NULL, EOPNOTSUPP; nothing else runs
 *
 * Build: gcc -g open_qp.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"

static struct ibv_qp *open_qp(struct ibv_context *ctx, struct ibv_xrcd *x, uint32_t num, enum ibv_qp_type type,
			      uint32_t mask)
{
	struct ibv_qp_open_attr a = {.comp_mask = mask, .qp_num = num, .xrcd = x, .qp_type = type};
	errno = 0;
	return ibv_open_qp(ctx, &a);
}

static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd)
{
	struct ibv_xrcd_init_attr a = {.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
				       .fd = fd,
				       .oflags = O_CREAT};
	return ibv_open_xrcd(ctx, &a);
}

int main(void)
{
	const uint32_t all = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	struct ibv_context *a;
	struct ibv_pd *pd;
	struct ibv_device **list = open_first_device(&a, &pd);
	struct ibv_device_attr da;
	if (ibv_query_device(a, &da)) {
		perror("ibv_query_device");
		return 2;
	}
	if (!(da.device_cap_flags & IBV_DEVICE_XRC)) {
		struct ibv_qp *q = open_qp(a, NULL, 1, IBV_QPT_XRC_RECV, all);
		check("no-xrc", !q && errno == EOPNOTSUPP,
		      "a device without IBV_DEVICE_XRC: NULL, EOPNOTSUPP (its provider has no open_qp)");
		return failures ? 1 : 0;
	}
	struct ibv_context *b = ibv_open_device(list[0]);
	char path[] = "/tmp/open_qp_xrcd_XXXXXX";
	int fd = mkstemp(path);
	struct ibv_xrcd *xa = b && fd >= 0 ? open_xrcd(a, fd) : NULL, *xb = xa ? open_xrcd(b, fd) : NULL;
	struct ibv_xrcd *other = xb ? open_xrcd(b, -1) : NULL;
	struct ibv_qp_init_attr_ex ta = {.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xa};
	struct ibv_qp *target = other ? ibv_create_qp_ex(a, &ta) : NULL;
	if (!target) {
		perror("the XRC domain and its target QP");
		return 2;
	}

	struct ibv_qp *opened = open_qp(b, xb, target->qp_num, IBV_QPT_XRC_RECV, all);
	check("open", opened && opened->qp_num == target->qp_num && opened->qp_type == IBV_QPT_XRC_RECV &&
			      opened->context == b,
	      "the target QP's number in the domain both contexts opened through one file: a QP of that number, "
	      "XRC_RECV, on the opening context");
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1};
	struct ibv_qp_init_attr init;
	int e = opened ? ibv_modify_qp(opened, &attr,
				       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
		       : -1;
	memset(&attr, 0, sizeof(attr));
	int qe = ibv_query_qp(target, &attr, IBV_QP_STATE, &init);
	check("shared", !e && !qe && attr.qp_state == IBV_QPS_INIT,
	      "INIT through the opened handle: the maker's handle queries INIT (one QP)");

	struct ibv_qp *q = open_qp(b, xb, target->qp_num + 1, IBV_QPT_XRC_RECV, all);
	check("bad-num", !q && errno == EINVAL, "a number that names no target QP of the domain: NULL, EINVAL");
	q = open_qp(b, other, target->qp_num, IBV_QPT_XRC_RECV, all);
	check("bad-xrcd", !q && errno == EINVAL,
	      "the target QP's number in another domain (opened without a file): NULL, EINVAL");
	q = open_qp(b, xb, target->qp_num, IBV_QPT_RC, all);
	check("bad-type", !q && errno == EINVAL, "qp_type IBV_QPT_RC: NULL, EINVAL");
	q = open_qp(b, xb, target->qp_num, IBV_QPT_XRC_RECV, IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD);
	check("bad-mask", !q && errno == EINVAL, "no IBV_QP_OPEN_ATTR_TYPE: NULL, EINVAL");
	q = open_qp(b, xb, target->qp_num, IBV_QPT_XRC_RECV, all | IBV_QP_OPEN_ATTR_RESERVED);
	check("bad-mask", !q && errno == EOPNOTSUPP, "a bit past IBV_QP_OPEN_ATTR_TYPE: NULL, EOPNOTSUPP");

	e = opened ? ibv_destroy_qp(opened) : -1;
	qe = ibv_query_qp(target, &attr, IBV_QP_STATE, &init);
	check("close", !e && !qe && attr.qp_state == IBV_QPS_INIT && ibv_destroy_qp(target) == 0,
	      "ibv_destroy_qp on the opened handle: 0, and the maker's QP lives on until it destroys it");

	/* the kernel destroys an XRC target QP with the last handle on it (__ib_destroy_shared_qp) */
	struct ibv_qp *target2 = ibv_create_qp_ex(a, &ta);
	struct ibv_qp *opened2 = target2 ? open_qp(b, xb, target2->qp_num, IBV_QPT_XRC_RECV, all) : NULL;
	uint32_t qpn2 = opened2 ? opened2->qp_num : 0;
	e = opened2 ? ibv_destroy_qp(target2) : -1;
	qe = opened2 ? ibv_query_qp(opened2, &attr, IBV_QP_STATE, &init) : -1;
	struct ibv_qp *again = open_qp(b, xb, qpn2, IBV_QPT_XRC_RECV, all);
	int e2 = opened2 ? ibv_destroy_qp(opened2) : -1;
	int e3 = again ? ibv_destroy_qp(again) : -1;
	struct ibv_qp *gone = open_qp(b, xb, qpn2, IBV_QPT_XRC_RECV, all);
	check("maker-first", !e && !qe && attr.qp_state == IBV_QPS_RESET && again && !e2 && !e3 && !gone &&
				     errno == EINVAL,
	      "the maker destroys its handle first: the QP lives on for the opened handles (queried, opened again), "
	      "and goes with the last one (then EINVAL)");

	ibv_close_xrcd(other);
	ibv_close_xrcd(xb);
	ibv_close_xrcd(xa);
	close(fd);
	unlink(path);
	ibv_close_device(b);
	ibv_dealloc_pd(pd);
	ibv_close_device(a);
	ibv_free_device_list(list);
	return failures ? 1 : 0;
}
