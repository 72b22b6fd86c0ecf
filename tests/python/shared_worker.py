"""weft.torch.empty: tensors in weft's shared memory. Every collective on them is right,
and those of 64 KiB or more run the single pass (the planner says so at
WEFT_DEBUG=INFO, which test_shared.py reads); a group where one rank's tensor is an
ordinary one runs the plain path and is right too. Prints "rank R: SHARED-OK"."""
import os

import torch
import torch.distributed as dist

import weft.torch

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("weft")

n = 1 << 18  # 1 MiB of float32
t = weft.torch.empty(n)
assert t.dtype == torch.float32 and t.shape == (n,) and not t.is_cuda
assert torch.count_nonzero(t) == 0, "weftMemAlloc memory is zero-filled"
assert weft.torch.empty((2, 3), dtype=torch.bfloat16).shape == (2, 3)
assert weft.torch.empty(0).numel() == 0

t.copy_(torch.arange(n, dtype=torch.float32) + rank)
dist.all_reduce(t)
want = torch.arange(n, dtype=torch.float32) * world + sum(range(world))
assert torch.equal(t, want), (t[:4], want[:4])

b = weft.torch.empty(n, dtype=torch.int64)
if rank == 0:
    b.copy_(torch.arange(n))
dist.broadcast(b, src=0)
assert torch.equal(b, torch.arange(n)), b[:4]

blk = n // world
out = weft.torch.empty(world * blk)
inp = weft.torch.empty(blk)
inp.fill_(float(rank))
dist.all_gather_into_tensor(out, inp)
assert torch.equal(out, torch.arange(world).repeat_interleave(blk).float()), out[::blk]

rs_in = weft.torch.empty(world * 4096)
rs_in.fill_(1.0)
rs_out = weft.torch.empty(4096)
dist.reduce_scatter_tensor(rs_out, rs_in)
assert torch.equal(rs_out, torch.full((4096,), float(world))), rs_out[:4]

# Tensors made with share_memory_() live in a /dev/shm file torch keeps a descriptor of:
# weft finds it (on Linux 6.11 and later) and they take the single pass too, views at an
# offset into their storage included (test_shared.py reads the planner's line).
s = (torch.arange(2 * n, dtype=torch.float32) + rank).share_memory_()
view = s[n:]  # the storage's second half
dist.reduce(view, dst=0)
if rank == 0:
    want = torch.arange(n, 2 * n, dtype=torch.float32) * world + sum(range(world))
    assert torch.equal(view, want), (view[:4], want[:4])
    assert torch.equal(s[:n], torch.arange(n, dtype=torch.float32)), "the first half moved"

# Rank 0's tensor is an ordinary one: every rank falls back to the plain path.
mixed = torch.ones(n) if rank == 0 else weft.torch.empty(n).fill_(1.0)
dist.all_reduce(mixed)
assert torch.equal(mixed, torch.full((n,), float(world))), mixed[:4]

for bad in ((-1,), (2, -3)):
    try:
        weft.torch.empty(*bad)
    except (ValueError, RuntimeError) as e:
        assert "negative size" in str(e), e
    else:
        raise AssertionError(f"weft.torch.empty{bad} did not fail")

dist.destroy_process_group()
print(f"rank {rank}: SHARED-OK", flush=True)
