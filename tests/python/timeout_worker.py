"""Rank 0 waits for an operation rank 1 never joins; rank 1 stays connected (so that
only a timeout can end rank 0's wait) until rank 0 says it is done. The timeout comes
from the mode: "init" init_process_group(timeout=), "env" WEFT_TIMEOUT over a longer
init timeout, "set" dist.set_timeout, "op" an operation's options, "ephemeral"
dist.set_timeout after two ephemeral extensions (torch's _add_ephemeral_timeout_for_all_pgs)
that end with the receive before it, which rank 1 answers late, within them. Rank 0
prints what it raised and how long the wait took."""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

MODE = sys.argv[1]
rank = int(os.environ["RANK"])

init_timeout = {"init": timedelta(seconds=3), "env": timedelta(seconds=600)}.get(MODE)
if MODE == "init":
    os.environ.pop("WEFT_TIMEOUT", None)  # the group timeout alone decides
if init_timeout is None:
    dist.init_process_group("weft")
else:
    dist.init_process_group("weft", timeout=init_timeout)
store = dist.distributed_c10d._get_default_store()
dist.barrier()

if MODE == "ephemeral":
    dist.set_timeout(timedelta(seconds=1))
    if rank == 0:
        # 1 s + 2 x 3 s: only both extensions together cover rank 1's 4.5 s.
        dist.distributed_c10d._add_ephemeral_timeout_for_all_pgs(timedelta(seconds=3))
        dist.distributed_c10d._add_ephemeral_timeout_for_all_pgs(timedelta(seconds=3))
        start = time.monotonic()
        dist.recv(torch.zeros(4), src=1)
        print(f"rank 0: EXTENDED-OK after {time.monotonic() - start:.2f} s", flush=True)
    else:
        time.sleep(4.5)
        dist.send(torch.ones(4), dst=0)

if rank == 1:
    # Bounded: rank 0 is done within its timeout, far under this.
    store.wait(["rank0-done"], timedelta(seconds=60))
else:
    if MODE == "set":
        dist.set_timeout(timedelta(seconds=2))
    backend = dist.group.WORLD._get_backend(torch.device("cpu"))
    print(f"rank 0: ERROR-BEFORE {backend.get_error()}", flush=True)
    start = time.monotonic()
    try:
        if MODE == "op":
            opts = dist.AllreduceOptions()
            opts.timeout = timedelta(seconds=1.5)
            dist.group.WORLD.allreduce([torch.ones(4)], opts).wait()
        else:
            buf = torch.zeros(4)
            dist.irecv(buf, src=1).wait()
        print("rank 0: RETURNED-WITHOUT-ERROR", flush=True)
    except Exception as e:  # noqa: BLE001 - the error is what the test checks
        print(f"rank 0: RAISED {type(e).__name__}: {e}", flush=True)
    print(f"rank 0: WAITED {time.monotonic() - start:.2f}", flush=True)
    print(f"rank 0: ERROR-AFTER {backend.get_error()}", flush=True)
    store.set("rank0-done", "1")
dist.destroy_process_group()
print(f"rank {rank}: DESTROYED", flush=True)
