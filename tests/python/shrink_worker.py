"""shrink_group on weft (weftCommShrink): the last rank leaves (healthy group) or dies
(SHRINK_ABORT); the others continue on the shrunk group. argv[1]: healthy | dead."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.distributed_c10d import SHRINK_ABORT, SHRINK_DEFAULT, shrink_group

import weft.torch  # noqa: F401

mode = sys.argv[1]
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
last = world - 1
dist.init_process_group("weft")
assert dist.group.WORLD._get_backend(torch.device("cpu")).supports_shrinking
t = torch.ones(4)
dist.all_reduce(t)
assert torch.equal(t, torch.full((4,), float(world)))

if rank == last:
    if mode == "dead":
        os._exit(3)  # dies without a word; the survivors find out through weft
    print(f"rank {rank}: LEFT", flush=True)
    os._exit(0)  # excluded ranks must not call shrink_group

flags = SHRINK_DEFAULT
if mode == "dead":
    # A collective the dead rank never joins fails (bounded by WEFT_TIMEOUT) ...
    try:
        dist.all_reduce(torch.ones(4))
        print(f"rank {rank}: ALLREDUCE-WITH-DEAD-RANK-SUCCEEDED", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"rank {rank}: FAILED-AS-EXPECTED {type(e).__name__}", flush=True)
    flags = SHRINK_ABORT
start = time.monotonic()
g = shrink_group([last], shrink_flags=flags)  # ... and the survivors continue without it
print(f"rank {rank}: SHRANK in {time.monotonic() - start:.2f} s", flush=True)
assert dist.get_world_size(g) == world - 1 and dist.get_rank(g) == rank, g
t = torch.full((4,), float(rank + 1))
dist.all_reduce(t, group=g)
assert torch.equal(t, torch.full((4,), float(sum(range(1, world))))), t
out = [torch.empty(1) for _ in range(world - 1)]
dist.all_gather(out, torch.tensor([float(rank)]), group=g)
assert [o.item() for o in out] == [float(r) for r in range(world - 1)], out
b = torch.tensor([float(rank)])
dist.broadcast(b, src=0, group=g)
assert b.item() == 0.0, b
dist.barrier(group=g)
print(f"rank {rank}: SHRINK-OK", flush=True)
os._exit(0)  # the parent group lost a rank; skip torch's exit-time teardown of it
