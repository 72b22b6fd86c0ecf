"""One rank of DDP training with weft and with gloo from the same seed.

Writes $WEFT_TEST_OUT/rank<r>.json (the per-step losses of both runs) and
rank<r>.pt (the final weft parameters); the test compares the parameters across ranks.
WEFT_TEST_WIDTH (hidden width, default 64) and WEFT_TEST_BUCKET_MB (default 0.01) size
the model and DDP's buckets; WEFT_TEST_SHARED_MIN_BYTES, when set, calls
weft.torch.use_shared_memory(min_bytes) first, so that DDP's buckets are in weft's
shared memory.

Why files and not a last gloo all_gather: gloo's worker thread drops its reference to a
finished Work (and so to the Python tensors in it) after wait() has returned. If the
process exits in that window, the thread takes the GIL during interpreter shutdown and
aborts ("terminate called without an active exception"), a torch race seen 1 time in
5-30 runs on a loaded 2-core machine.
"""
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft.torch

RANK = int(os.environ["RANK"])
STEPS = 50
WIDTH = int(os.environ.get("WEFT_TEST_WIDTH", "64"))
BUCKET_MB = float(os.environ.get("WEFT_TEST_BUCKET_MB", "0.01"))


def model():
    torch.manual_seed(0)  # the same initial weights for both runs (DDP also broadcasts)
    return torch.nn.Sequential(torch.nn.Linear(32, WIDTH), torch.nn.ReLU(),
                               torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
                               torch.nn.Linear(WIDTH, 10))


def train(group):
    # bucket_cap_mb small so gradients travel in several buckets, as in a real model
    net = DDP(model(), process_group=group, bucket_cap_mb=BUCKET_MB)
    opt = torch.optim.SGD(net.parameters(), lr=0.2, momentum=0.9)
    g = torch.Generator().manual_seed(1000 + RANK)  # each rank its own data shard
    teacher = torch.randn(32, 10, generator=torch.Generator().manual_seed(7))
    losses = []
    for _ in range(STEPS):
        x = torch.randn(32, 32, generator=g)
        y = (x @ teacher).argmax(1)  # learnable labels, so the loss curve means something
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, torch.cat([p.detach().flatten() for p in net.parameters()])


def main():
    if "WEFT_TEST_SHARED_MIN_BYTES" in os.environ:
        weft.torch.use_shared_memory(int(os.environ["WEFT_TEST_SHARED_MIN_BYTES"]))
        assert weft.torch.shared_memory_min_bytes() > 0
    dist.init_process_group("gloo")
    gloo = dist.group.WORLD
    weft_group = dist.new_group(backend="weft")
    gloo_losses, _ = train(gloo)
    weft_losses, params = train(weft_group)
    out = os.environ["WEFT_TEST_OUT"]
    torch.save(params, os.path.join(out, f"rank{RANK}.pt"))
    with open(os.path.join(out, f"rank{RANK}.json"), "w") as f:
        json.dump({"gloo": gloo_losses, "weft": weft_losses}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
