"""torch's one-sided windows (dist._new_window) on weft, at WORLD_SIZE ranks of one host.
argv[1]: ring | plain | dies.

ring: each rank registers a weft.torch.empty tensor, puts its values into the next
rank's window at its own offset, signals it and waits for the previous rank's signal,
for 20 rounds, every element checked; map_remote_tensor reads a peer's tensor in place;
bad puts are refused. plain: rank 1's tensor is an ordinary one, and every rank's
registration fails naming rank 1. dies: the last rank exits, and a wait for its signal
fails naming it.
"""
import os
import sys
import time
from datetime import timedelta

import torch
import torch._C._distributed_c10d as c10d
import torch.distributed as dist

import weft.torch

mode = sys.argv[1]
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("weft")
assert dist._supports_window()
n = 1024


def say(what):
    print(f"rank {rank}: {what}", flush=True)


if mode == "plain":
    t = torch.zeros(n) if rank == 1 else weft.torch.empty(n)
    try:
        dist._new_window(t)
        say("REGISTERED")
    except RuntimeError as e:
        assert "rank 1: its buffer" in str(e) and "weft.torch.empty" in str(e), str(e)
        say("REFUSED")
    t = torch.ones(2)
    dist.all_reduce(t)
    assert t[0].item() == world
    say("PLAIN-OK")
    sys.exit(0)

mine = weft.torch.empty(world * n)
win = dist._new_window(mine)
assert win.get_attr(0).access_type == c10d.WindowAccessType.UNIFIED
nxt, prev = (rank + 1) % world, (rank - 1) % world

if mode == "dies":
    if rank == world - 1:
        os._exit(3)
    if rank == 0:
        start = time.monotonic()
        try:
            win.wait_signal(world - 1, False)
            say("WAIT-SUCCEEDED")
        except RuntimeError as e:
            assert f"from rank {world - 1}, whose process" in str(e), str(e)
            say(f"PEER-GONE in {time.monotonic() - start:.2f} s")
    os._exit(0)

for rnd in range(20):
    values = torch.arange(n, dtype=torch.float32) + 1000 * rank + rnd
    win.put(values, nxt, rank * n, False)
    win.signal(nxt, False)
    win.wait_signal(prev, False)
    want = torch.arange(n, dtype=torch.float32) + 1000 * prev + rnd
    assert torch.equal(mine[prev * n:(prev + 1) * n], want), (rnd, mine[prev * n:prev * n + 4])
    dist.barrier()  # nobody puts the next round before everyone has checked this one

# A peer's tensor, read in place: what this rank put there last.
remote = win.map_remote_tensor(nxt)
assert remote.shape == (world * n,), remote.shape
assert torch.equal(remote[rank * n:(rank + 1) * n],
                   torch.arange(n, dtype=torch.float32) + 1000 * rank + 19)

short = c10d.WaitSignalOptions()
short.timeout = timedelta(milliseconds=200)
for bad, words in [
        (lambda: win.put(torch.ones(2), nxt, world * n - 1, False), "do not fit"),
        (lambda: win.put(torch.ones(2, dtype=torch.float64), nxt, 0, False), "registered dtype"),
        (lambda: win.put(torch.ones(2), world, 0, False), f"peer {world} is out of range"),
        (lambda: win.wait_signal(prev, False, short), "timed out")]:
    try:
        bad()
        raise AssertionError(f"no error; expected {words!r}")
    except (RuntimeError, ValueError) as e:
        assert words in str(e), str(e)
win.tensor_deregister()
try:
    win.signal(nxt, False)
    raise AssertionError("signal after deregister worked")
except RuntimeError as e:
    assert "no tensor is registered" in str(e), str(e)
say("RING-OK")
dist.destroy_process_group()
