"""batch_isend_irecv and _coalescing_manager on weft: one Work for a batch of p2p ops."""
import os

import torch
import torch.distributed as dist
from torch.distributed.distributed_c10d import _coalescing_manager

import weft.torch  # noqa: F401

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("weft")
right, left = (rank + 1) % world, (rank - 1) % world
pg = dist.group.WORLD
assert pg._get_backend(torch.device("cpu")).supports_coalescing

# A ring in both directions, in one batch: every rank's two receives get the right data.
for step in range(3):
    to_right = torch.full((1000,), float(rank * 10 + step))
    to_left = torch.full((7,), float(rank * 100 + step))
    from_left, from_right = torch.empty(1000), torch.empty(7)
    reqs = dist.batch_isend_irecv([
        dist.P2POp(dist.isend, to_right, right), dist.P2POp(dist.irecv, from_left, left),
        dist.P2POp(dist.isend, to_left, left), dist.P2POp(dist.irecv, from_right, right)])
    for r in reqs:
        r.wait()
    assert torch.equal(from_left, torch.full((1000,), float(left * 10 + step))), from_left[:3]
    assert torch.equal(from_right, torch.full((7,), float(right * 100 + step))), from_right

# The coalescing manager with a device: the Work it returns covers every op inside.
got = torch.empty(3)
with _coalescing_manager(device=torch.device("cpu"), async_ops=True) as cm:
    dist.isend(torch.full((3,), float(rank)), right)
    dist.irecv(got, left)
cm.wait()
assert torch.equal(got, torch.full((3,), float(left))), got

# An endCoalescing with no start is refused with a message naming the rank.
try:
    pg._end_coalescing(torch.device("cpu"))
    print(f"rank {rank}: END-WITHOUT-START-ACCEPTED", flush=True)
except RuntimeError as e:
    assert f"weft endCoalescing: rank {rank} has no startCoalescing" in str(e), e

# Calls that wait for their own operations are refused inside a batch, which stays usable.
pg._start_coalescing(torch.device("cpu"))
for name, call in (("monitored_barrier", lambda: dist.monitored_barrier()),
                   ("allreduce (sparse)",
                    lambda: dist.all_reduce(torch.sparse_coo_tensor([[0]], [1.0], (2,))))):
    try:
        call()
        print(f"rank {rank}: {name.upper()}-IN-BATCH-ACCEPTED", flush=True)
    except RuntimeError as e:
        assert f"weft {name}: rank {rank} is inside a coalesced batch" in str(e), e
pg._end_coalescing(torch.device("cpu")).wait()

dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: COALESCING-OK", flush=True)
