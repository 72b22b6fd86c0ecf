"""A small MLP trained with DistributedDataParallel on synthetic data.

    torchrun --nproc-per-node 2 examples/ddp_train.py --backend weft
    weftrun -n 2 python3 examples/ddp_train.py --backend weft
    torchrun --nproc-per-node 2 examples/ddp_train.py --backend gloo   # to compare

Each rank trains on its own shard of a synthetic classification task (labels from a
fixed random "teacher"), so the loss falls; rank 0 prints it with the mean step time.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft.env
import weft.torch  # noqa: F401  registers the "weft" backend


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--backend", default="weft", help="weft or gloo")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.1)
    args = p.parse_args()

    weft.env.torch_env_from_weftrun()  # no-op under torchrun
    if "OMP_NUM_THREADS" not in os.environ:
        # torchrun sets 1; weftrun sets nothing, and ranks whose OpenMP threads outnumber
        # the cores slow every backend down by an order of magnitude.
        torch.set_num_threads(max(1, os.cpu_count() // int(os.environ["LOCAL_WORLD_SIZE"])))
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(0)  # DDP broadcasts rank 0's weights anyway; this keeps runs comparable
    model = DDP(torch.nn.Sequential(
        torch.nn.Linear(64, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    teacher = torch.randn(64, 10, generator=torch.Generator().manual_seed(7))
    data = torch.Generator().manual_seed(1000 + rank)

    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        x = torch.randn(args.batch, 64, generator=data)
        y = (x @ teacher).argmax(1)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0 and (step % max(1, args.steps // 10) == 0 or step == 1):
            print(f"step {step:5d}  loss {loss.item():.4f}", flush=True)
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"{args.backend}: {world} ranks, {args.steps} steps, "
              f"{1000 * elapsed / args.steps:.2f} ms/step", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
