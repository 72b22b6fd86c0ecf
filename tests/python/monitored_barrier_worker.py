"""dist.monitored_barrier on weft. argv[1]:
  "pass":  every rank calls it (both forms, on the world and on a subgroup): all pass;
           then rank 2 stays away: rank 0 names it, rank 1 says rank 0 did not release it;
  "all":   only rank 0 calls it with wait_all_ranks: it names ranks 1 and 2;
  "zero":  rank 0 calls it with a timeout of 0: it ran out of time at once.
Each rank prints what it raised and how long the call took."""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

mode = sys.argv[1]
rank = int(os.environ["RANK"])
dist.init_process_group("weft")
store = dist.distributed_c10d._get_default_store()


def attempt(**kwargs):
    start = time.monotonic()
    try:
        dist.monitored_barrier(**kwargs)
        print(f"rank {rank}: PASSED", flush=True)
    except RuntimeError as e:
        print(f"rank {rank}: RAISED {e}", flush=True)
    print(f"rank {rank}: TOOK {time.monotonic() - start:.2f}", flush=True)


if mode == "pass":
    for wait_all in (False, True):
        dist.monitored_barrier(timeout=timedelta(seconds=10), wait_all_ranks=wait_all)
    sub = dist.new_group([0, 1])
    if rank in (0, 1):
        dist.monitored_barrier(sub, timeout=timedelta(seconds=10))
    t = torch.ones(2)
    dist.all_reduce(t)  # the group still works after barriers that passed
    assert torch.equal(t, torch.full((2,), 3.0)), t
    print(f"rank {rank}: ALL-PASSED", flush=True)
    if rank != 2:
        attempt(timeout=timedelta(seconds=1))
elif mode == "all" and rank == 0:
    attempt(timeout=timedelta(seconds=0.5), wait_all_ranks=True)
elif mode == "zero" and rank == 0:
    attempt(timeout=timedelta(seconds=0))
# Rank 0 serves the store: it leaves last.
store.add("done", 1)
deadline = time.monotonic() + 60
while rank == 0 and int(store.add("done", 0)) < 3 and time.monotonic() < deadline:
    time.sleep(0.05)
os._exit(0)
