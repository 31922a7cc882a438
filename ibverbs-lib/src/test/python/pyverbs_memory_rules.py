"""The memory-side rules of rdma-core's own tests (tests/test_mr.py, test_odp.py, test_qpex.py, test_shared_pd.py)
through the library, one check per argument: each prints "ok NAME" when the device answered as the real stack does.

  reset-clean EXPECT  flushes of a QP left in its CQ after ibv_modify_qp to RESET: EXPECT is 0 (mlx4, mlx5 clean the
                      CQ) or the number left (rxe, siw)
  rereg-unsupported   ibv_rereg_mr is EOPNOTSUPP with IBV_REREG_MR_ERR_INPUT (a provider without rereg_mr)
  odp-qp-access       ON_DEMAND in qp_access_flags is taken by ibv_modify_qp to INIT (test_odp.py's OdpRdmaRC)
  odp-implicit        a SEND gathered from a buffer mapped after an implicit ODP registration succeeds
  odp-caps UD XRC     query_device_ex reports the UD and XRC ODP capabilities (decimal masks)
  send-ops-eopnotsupp ibv_create_qp_ex with IBV_QP_EX_WITH_ATOMIC_WRITE is EOPNOTSUPP (mlx5's table lacks it)
  import-device       a context imported from a dup of cmd_fd imports the PD and MR by their handles (same keys)
  atomic-write        ibv_wr_atomic_write on a QP created with IBV_QP_EX_WITH_ATOMIC_WRITE places its 8 bytes (rxe)
"""
import errno
import os
import sys

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mem_alloc import posix_memalign, free
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr, QPInitAttrEx, QPEx
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.wr import SGE, RecvWR, SendWR

SIZE = 1024


def rc_qp(ctx, pd, cq, access=e.IBV_ACCESS_LOCAL_WRITE):
    init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=QPCap(max_send_wr=8, max_recv_wr=8))
    attr = QPAttr(port_num=1)
    attr.qp_access_flags = access
    return QP(pd, init, attr)


def connect(ctx, a, b):
    lid = ctx.query_port(1).lid
    for qp, peer in ((a, b), (b, a)):
        attr = QPAttr(port_num=1)
        attr.dest_qp_num = peer.qp_num
        attr.path_mtu = e.IBV_MTU_1024
        attr.max_dest_rd_atomic = 1
        attr.min_rnr_timer = 12
        # a global route, which RoCE ports (rxe) need and InfiniBand ones take
        attr.ah_attr = AHAttr(port_num=1, dlid=lid, is_global=1,
                              gr=GlobalRoute(dgid=ctx.query_gid(1, 0), sgid_index=0))
        qp.to_rtr(attr)
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = 7
        attr.max_rd_atomic = 1
        qp.to_rts(attr)


def poll_all(cq):
    out = []
    for _ in range(100):
        n, wcs = cq.poll(16)
        out += wcs[:n]
        if n == 0 and out:
            break
    return out


def wait_one(cq):
    for _ in range(100000):
        n, wcs = cq.poll(1)
        if n:
            return wcs[0]
    sys.exit("no completion")


def reset_clean(ctx, expect):
    with PD(ctx) as pd, CQ(ctx, 32) as cq:
        mr = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        qp = rc_qp(ctx, pd, cq)
        for i in range(3):
            qp.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf, SIZE, mr.lkey)]))
        qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
        first = wait_one(cq)
        assert first.status == e.IBV_WC_WR_FLUSH_ERR, first.status
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
        left = [wc for wc in poll_all(cq) if wc.qp_num == qp.qp_num]
        assert len(left) == expect, f"{len(left)} flushes left after RESET, expected {expect}"


def rereg_unsupported(ctx):
    with PD(ctx) as pd:
        mr = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        lkey = mr.lkey
        try:
            mr.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, None, 0, 0,
                     e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        except PyverbsRDMAError as ex:
            assert ex.error_code == errno.EOPNOTSUPP, ex
            assert "IBV_REREG_MR_ERR_INPUT" in str(ex), ex
            assert mr.lkey == lkey
            return
        sys.exit("ibv_rereg_mr succeeded")


def odp_qp_access(ctx):
    with PD(ctx) as pd, CQ(ctx, 8) as cq:
        access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_ON_DEMAND | e.IBV_ACCESS_REMOTE_WRITE
        qp = rc_qp(ctx, pd, cq, access)
        assert qp.query(e.IBV_QP_STATE)[0].qp_state == e.IBV_QPS_INIT


def odp_implicit(ctx):
    with PD(ctx) as pd, CQ(ctx, 32) as cq:
        access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_ON_DEMAND
        mr = MR(pd, SIZE, access, implicit=True)
        # Mapped after the registration: only the page walk at the fault finds it.
        src = posix_memalign(SIZE)
        dst = posix_memalign(SIZE)
        a = rc_qp(ctx, pd, cq)
        b = rc_qp(ctx, pd, cq)
        connect(ctx, a, b)
        b.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(dst, SIZE, mr.lkey)]))
        a.post_send(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(src, SIZE, mr.lkey)]))
        got = [wait_one(cq), wait_one(cq)]
        assert all(wc.status == e.IBV_WC_SUCCESS for wc in got), [wc.status for wc in got]
        free(src)
        free(dst)


def odp_caps(ctx, ud, xrc):
    caps = ctx.query_device_ex().odp_caps
    assert caps.ud_odp_caps == ud, caps.ud_odp_caps
    assert caps.xrc_odp_caps == xrc, caps.xrc_odp_caps


def send_ops_eopnotsupp(ctx):
    with PD(ctx) as pd, CQ(ctx, 8) as cq:
        def init(ops):
            return QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, pd=pd, cap=QPCap(max_send_wr=8, max_recv_wr=8),
                                send_ops_flags=ops,
                                comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
        try:
            QPEx(ctx, init(e.IBV_QP_EX_WITH_ATOMIC_WRITE))
        except PyverbsRDMAError as ex:
            assert ex.error_code == errno.EOPNOTSUPP, ex
            QPEx(ctx, init(e.IBV_QP_EX_WITH_RDMA_WRITE)).close()
            return
        sys.exit("ATOMIC_WRITE in send_ops_flags was taken")


def atomic_write(ctx):
    with PD(ctx) as pd, CQ(ctx, 8) as cq:
        mr = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        mr.write(b"\0" * 16, 16)
        init = QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, pd=pd, cap=QPCap(max_send_wr=8, max_recv_wr=8),
                            send_ops_flags=e.IBV_QP_EX_WITH_ATOMIC_WRITE,
                            comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
        a = QPEx(ctx, init, attr)
        b = QPEx(ctx, init, attr)
        connect(ctx, a, b)
        a.wr_start()
        a.wr_id = 7
        a.wr_flags = e.IBV_SEND_SIGNALED
        a.wr_atomic_write(mr.rkey, mr.buf + 8, b"rnic-sim")
        a.wr_complete()
        wc = wait_one(cq)
        assert wc.status == e.IBV_WC_SUCCESS, wc.status
        assert mr.read(16, 0) == b"\0" * 8 + b"rnic-sim", mr.read(16, 0)


def import_device(ctx):
    with PD(ctx) as pd:
        mr = MR(pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        with d.Context(cmd_fd=os.dup(ctx.cmd_fd)) as imported:
            shared_pd = PD(imported, handle=pd.handle)
            shared_mr = MR(shared_pd, handle=mr.handle, address=mr.buf)
            assert (shared_mr.lkey, shared_mr.rkey) == (mr.lkey, mr.rkey), (shared_mr.lkey, mr.lkey)
            try:
                PD(imported, handle=pd.handle + 1000)
                sys.exit("a PD handle nobody holds was imported")
            except PyverbsRDMAError as ex:
                assert ex.error_code == errno.EINVAL, ex
            shared_mr.unimport()
            shared_pd.unimport()
        # the first context and its PD and MR live on after the imported context is closed
        mr.write(b"x", 1)
        mr.close()


name = d.get_device_list()[0].name.decode()
with d.Context(name=name) as context:
    check = sys.argv[1]
    if check == "reset-clean":
        reset_clean(context, int(sys.argv[2]))
    elif check == "rereg-unsupported":
        rereg_unsupported(context)
    elif check == "odp-qp-access":
        odp_qp_access(context)
    elif check == "odp-implicit":
        odp_implicit(context)
    elif check == "odp-caps":
        odp_caps(context, int(sys.argv[2]), int(sys.argv[3]))
    elif check == "send-ops-eopnotsupp":
        send_ops_eopnotsupp(context)
    elif check == "import-device":
        import_device(context)
    elif check == "atomic-write":
        atomic_write(context)
    else:
        sys.exit("unknown check " + check)
    print("ok " + check)
