"""pyverbs on the simulated mlx5 device: the completion clock of ibv_query_device_ex, ibv_query_rt_values_ex, an
extended CQ with completion timestamps, ibv_resize_cq, and a parent domain whose allocator pyverbs' callbacks serve
(exit 0 when all hold; one line per check)."""
import sys

import pyverbs.device as d
import pyverbs.enums as e
import pyverbs.mem_alloc as mem
from pyverbs.cq import CQ, CQEX, CqInitAttrEx
from pyverbs.pd import PD, ParentDomain, ParentDomainContext, ParentDomainInitAttr
from pyverbs.qp import QP, QPCap, QPInitAttr

calls = {"alloc": [], "free": []}


def alloc(pd, context, size, alignment, resource_type):
    ptr = mem.posix_memalign(size, alignment)
    calls["alloc"].append((ptr, size, alignment, resource_type))
    return ptr


def free(pd, context, ptr, resource_type):
    calls["free"].append((ptr, resource_type))
    mem.free(ptr)


devices = d.get_device_list()
if not devices:
    sys.exit("no device")
name = devices[0].name.decode()
with d.Context(name=name) as ctx:
    ex = ctx.query_device_ex()
    assert ex.hca_core_clock == 156250, ex.hca_core_clock
    print(f"hca_core_clock {ex.hca_core_clock} kHz")
    _, raw = ctx.query_rt_values_ex()
    print(f"raw clock {raw} cycles")

    cqex = CQEX(ctx, CqInitAttrEx(cqe=8, wc_flags=e.IBV_WC_STANDARD_FLAGS
                                  | e.IBV_WC_EX_WITH_COMPLETION_TIMESTAMP))
    assert cqex.start_poll(None) == 2  # ENOENT: nothing completed yet
    cqex.close()
    print("extended CQ with timestamps: created, empty")

    cq = CQ(ctx, 3)
    cq.resize(7)
    assert cq.cqe == 7, cq.cqe
    print(f"resized to {cq.cqe} entries")

    with PD(ctx) as pd:
        pctx = ParentDomainContext(pd, alloc, free)
        parent = ParentDomain(ctx, attr=ParentDomainInitAttr(pd=pd, pd_context=pctx))
        qp = QP(parent, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                                   cap=QPCap(max_send_wr=4, max_recv_wr=4)))
        assert len(calls["alloc"]) == 2, calls  # the work queue and its doorbell record
        qp.close()
        assert sorted(p for p, _ in calls["free"]) == sorted(p for p, *_ in calls["alloc"]), calls
        print(f"parent domain: {len(calls['alloc'])} buffers from the allocator, {len(calls['free'])} given back")
        parent.close()
    cq.close()
