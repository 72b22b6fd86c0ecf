"""merge_remote_group on weft: processes of separate single-rank jobs (each its own world,
on its own store) join into one group through a shared store. argv[1]: the merged size
(fewer than the processes launched: the surplus ones are refused)."""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

launched = int(os.environ["WORLD_SIZE"])
size = int(sys.argv[1])
# This process's own job: a world of one, on a store no other process sees.
dist.init_process_group("weft", store=dist.HashStore(), rank=0, world_size=1)
assert dist.get_world_size() == 1
shared = dist.TCPStore("127.0.0.1", int(os.environ["MASTER_PORT"]), launched,
                       is_master=os.environ["RANK"] == "0", timeout=timedelta(seconds=30))
try:
    merged = dist.group.WORLD.merge_remote_group(shared, size, timedelta(seconds=30), "merged")
except ValueError as e:  # this process came after `size` others
    merged = None
    print(f"REFUSED {e}", flush=True)
if merged is not None:
    rank = merged.rank()
    assert merged.name() == "weft", merged.name()
    assert merged.size() == size and 0 <= rank < size, (merged.size(), rank)
    t = torch.full((4,), float(rank + 1))
    merged.allreduce([t]).wait()
    assert torch.equal(t, torch.full((4,), float(size * (size + 1) // 2))), t
    out = [torch.empty(1) for _ in range(size)]
    merged.allgather([out], [torch.tensor([float(rank)])]).wait()
    assert sorted(o.item() for o in out) == [float(r) for r in range(size)], out
    print(f"MERGED rank {rank} of {size}", flush=True)
# The first process serves the shared store: it leaves once every process is done.
shared.add("done", 1)
if os.environ["RANK"] == "0":
    deadline = time.monotonic() + 30
    while int(shared.add("done", 0)) < launched and time.monotonic() < deadline:
        time.sleep(0.01)
os._exit(0)
