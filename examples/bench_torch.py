"""weft vs gloo through torch.distributed, in the same run: allreduce throughput by
size and DDP step time.

    torchrun --nproc-per-node 4 examples/bench_torch.py
    torchrun --nproc-per-node 2 examples/bench_torch.py --json out.json

Both backends run in one process group set-up (gloo as the default group, weft as a
second group over the same ranks), alternating, so they see the same machine state.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft.env
import weft.torch  # noqa: F401


def time_allreduce(group, numel, min_seconds=0.3):
    x = torch.ones(numel)
    for _ in range(3):
        dist.all_reduce(x, group=group)
    iters, start = 0, time.perf_counter()
    while True:
        dist.all_reduce(x, group=group)
        iters += 1
        # every rank must run the same number of iterations: rank 0 decides
        flag = torch.tensor([float(time.perf_counter() - start >= min_seconds)])
        if iters % 8 == 0:
            dist.broadcast(flag, 0, group=group)
            if flag.item():
                break
    # the broadcasts are a few percent of the iterations and cost the same for both
    return (time.perf_counter() - start) / iters


def time_ddp(group, steps, hidden):
    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(512, hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                    torch.nn.Linear(hidden, 10)), process_group=group)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 512), torch.randint(0, 10, (64,))
    for i in range(steps + 5):
        if i == 5:
            dist.barrier(group=group)
            start = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - start) / steps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4K,64K,1M,16M", help="bytes per allreduce")
    p.add_argument("--ddp-steps", type=int, default=30)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--json")
    args = p.parse_args()
    weft.env.torch_env_from_weftrun()
    if "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(max(1, os.cpu_count() // int(os.environ["LOCAL_WORLD_SIZE"])))
    dist.init_process_group("gloo")
    groups = {"gloo": dist.group.WORLD, "weft": dist.new_group(backend="weft")}
    world, rank = dist.get_world_size(), dist.get_rank()
    units = {"K": 1 << 10, "M": 1 << 20}
    out = {"world_size": world, "torch": torch.__version__, "allreduce": [], "ddp": {}}
    for size in args.sizes.split(","):
        nbytes = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        row = {"bytes": nbytes}
        for name, group in groups.items():
            t = time_allreduce(group, nbytes // 4)
            row[name] = {"us": t * 1e6, "busbw_GBps": nbytes / t * 2 * (world - 1) / world / 1e9}
        out["allreduce"].append(row)
    for name, group in groups.items():
        out["ddp"][name] = {"ms_per_step": 1000 * time_ddp(group, args.ddp_steps, args.hidden)}
    if rank == 0:
        print(f"world {world}, torch {torch.__version__}")
        print(f"{'bytes':>10} {'gloo us':>10} {'weft us':>10} {'gloo GB/s':>10} "
              f"{'weft GB/s':>10} {'speed-up':>9}")
        for r in out["allreduce"]:
            print(f"{r['bytes']:>10} {r['gloo']['us']:>10.1f} {r['weft']['us']:>10.1f} "
                  f"{r['gloo']['busbw_GBps']:>10.3f} {r['weft']['busbw_GBps']:>10.3f} "
                  f"{r['gloo']['us'] / r['weft']['us']:>8.2f}x")
        g, w = out["ddp"]["gloo"]["ms_per_step"], out["ddp"]["weft"]["ms_per_step"]
        print(f"DDP step ({args.hidden} hidden): gloo {g:.2f} ms, weft {w:.2f} ms, "
              f"speed-up {g / w:.2f}x")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
