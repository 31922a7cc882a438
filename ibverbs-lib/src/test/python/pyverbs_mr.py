"""pyverbs on the simulated device: open it, allocate a PD, register an MR, deregister it (exit 0 when all hold)."""
import sys

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.pd import PD

devices = d.get_device_list()
if not devices:
    sys.exit("no device")
name = devices[0].name.decode()
with d.Context(name=name) as ctx:
    attr = ctx.query_device()
    with PD(ctx) as pd:
        mr = MR(pd, 65536, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
        mr.write(b"rnic-sim", 8)
        assert mr.read(8, 0) == b"rnic-sim", "the MR's buffer holds what was written"
        print(f"device {name} max_mr {attr.max_mr} lkey 0x{mr.lkey:x} rkey 0x{mr.rkey:x} length {mr.length}")
        mr.close()
        print("deregistered")
