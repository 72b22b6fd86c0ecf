"""One rank of bench/ddp_memory/run.py: DDP training on weft, gradient buckets in torch's
memory ("plain") or in weft's shared memory ("shared", weft.torch.use_shared_memory).

    ddp_memory_worker.py MODE WIDTH STEPS

Prints "STEP_SECONDS <median>" and "ALLREDUCE_SECONDS <median>" (the bucket all-reduces of
one step, timed by a DDP comm hook that waits for each), then "rank R: DDP-MEMORY-OK".
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft.torch

MODE, WIDTH, STEPS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
RANK = int(os.environ["RANK"])
WARMUP = 5


def main():
    if MODE == "shared":
        weft.torch.use_shared_memory(64 << 10)
    elif MODE != "plain":
        raise SystemExit(f"unknown mode {MODE!r}")
    torch.set_num_threads(1)  # ranks share the cores
    dist.init_process_group("weft")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
                              torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
                              torch.nn.Linear(WIDTH, 10))
    model = DDP(net)
    spent = [0.0]

    def timed_allreduce(state, bucket):
        # The default hook's work (average, then all-reduce), waited for here so that its
        # time is measured alone; DDP's overlap with backward is given up in both modes.
        t0 = time.perf_counter()
        buf = bucket.buffer()
        buf.div_(dist.get_world_size())
        dist.all_reduce(buf)
        spent[0] += time.perf_counter() - t0
        fut = torch.futures.Future()
        fut.set_result(buf)
        return fut

    model.register_comm_hook(None, timed_allreduce)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(RANK)
    steps, comm = [], []
    for step in range(WARMUP + STEPS):
        x = torch.randn(32, WIDTH, generator=g)
        spent[0] = 0.0
        t0 = time.perf_counter()
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step >= WARMUP:
            steps.append(time.perf_counter() - t0)
            comm.append(spent[0])
    print(f"STEP_SECONDS {statistics.median(steps):.6f}")
    print(f"ALLREDUCE_SECONDS {statistics.median(comm):.6f}")
    print(f"rank {RANK}: DDP-MEMORY-OK", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
