"""One rank of FSDP2 (fully_shard) training on CPU over a weft default group.

Trains 5 steps; every rank also trains an unsharded copy on the whole global batch
locally. WEFT_TEST_PG_ALLOC=1: FSDP's all-gather buffers come from the group's
allocate_tensor (weft's shared memory). With equal per-rank batches FSDP's averaged gradients equal the global-batch
gradients, so the gathered parameters must match the local reference.
Writes $WEFT_TEST_OUT/rank<r>.json: {"max_diff": float} or {"skip": reason}.
"""
import json
import os

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def batch(step, rank):
    g = torch.Generator().manual_seed(step * 100 + rank)
    return torch.randn(8, 16, generator=g), torch.randn(8, 4, generator=g)


def main():
    out = os.path.join(os.environ["WEFT_TEST_OUT"], f"rank{RANK}.json")
    try:
        from torch.distributed.fsdp import fully_shard
        from torch.distributed.device_mesh import init_device_mesh
    except ImportError as e:
        json.dump({"skip": f"this torch has no FSDP2 (fully_shard): {e}"}, open(out, "w"))
        return
    dist.init_process_group("weft")
    mesh = init_device_mesh("cpu", (WORLD,))
    net = model()
    for layer in net:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(net, mesh=mesh)
    pg_allocs = [0]
    if os.environ.get("WEFT_TEST_PG_ALLOC") == "1":
        # Counts FSDP's calls of the backend's allocate_tensor.
        from torch._C._distributed_c10d import Backend
        allocate = Backend.allocate_tensor

        def counted(self, *args, **kwargs):
            pg_allocs[0] += 1
            return allocate(self, *args, **kwargs)
        Backend.allocate_tensor = counted
        # FSDP's all-gather buffers from the group (allocate_tensor: weft's shared memory).
        backend = dist.group.WORLD._get_backend(torch.device("cpu"))
        assert backend.supports_tensor_alloc(torch.device("cpu"))
        t = allocate(backend, 1 << 16, dtype=torch.float32, device=torch.device("cpu"))
        assert t.shape == (1 << 16,) and t.dtype == torch.float32
        t.fill_(RANK + 1)
        dist.all_reduce(t)
        assert torch.equal(t, torch.full((1 << 16,), float(WORLD * (WORLD + 1) // 2))), t[:3]
        # Per FSDP module: each has its own parameter group.
        for m in net.modules():
            if hasattr(m, "set_allocate_memory_from_process_group_for_comm"):
                m.set_allocate_memory_from_process_group_for_comm(True)
    ref = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(5):
        x, y = batch(step, RANK)
        loss = torch.nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        xs, ys = zip(*(batch(step, r) for r in range(WORLD)))
        ref_loss = torch.nn.functional.mse_loss(ref(torch.cat(xs)), torch.cat(ys))
        ref_opt.zero_grad()
        ref_loss.backward()
        ref_opt.step()
    diffs = [(p.full_tensor() - q).abs().max().item()
             for p, q in zip(net.parameters(), ref.parameters())]
    json.dump({"max_diff": max(diffs), "pg_allocs": pg_allocs[0]}, open(out, "w"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
