"""weft's groups are named "weft" (pg.name(), DDP's logging), and a group weft shares
with another backend keeps both. argv[1]: "weft" (every way torch makes a group),
"shared" (init with "cpu:gloo,cuda:weft") or "detail" (TORCH_DISTRIBUTED_DEBUG=DETAIL,
under which torch checks that the ranks' collectives agree)."""
import os
import sys

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
mode = sys.argv[1]
cpu, cuda = torch.device("cpu"), torch.device("cuda")


def all_reduce_ok(group):
    t = torch.ones(3)
    dist.all_reduce(t, group=group)
    assert torch.equal(t, torch.full((3,), float(dist.get_world_size(group)))), t


if mode == "shared":
    # torch builds gloo for the CPU first; weft's creator must not replace that group.
    dist.init_process_group("cpu:gloo,cuda:weft")
    pg = dist.group.WORLD
    assert pg._get_backend(cpu).name() == "gloo", pg._get_backend(cpu).name()
    assert pg._get_backend(cuda).name() == "weft", pg._get_backend(cuda).name()
    all_reduce_ok(pg)
    print(f"rank {rank}: SHARED-OK", flush=True)
    dist.destroy_process_group()
    sys.exit(0)

if mode == "detail":
    dist.init_process_group("weft")
    pg = dist.group.WORLD
    assert pg.name() == "weft", pg.name()
    assert isinstance(pg._get_backend(cpu), dist.distributed_c10d._ProcessGroupWrapper)
    all_reduce_ok(pg)
    try:  # rank 0 reduces where the others broadcast: the checker names the mismatch
        if rank == 0:
            dist.all_reduce(torch.ones(2))
        else:
            dist.broadcast(torch.ones(2), src=0)
        print(f"rank {rank}: MISMATCH-NOT-CAUGHT", flush=True)
    except RuntimeError as e:
        assert "mismatch" in str(e).lower(), e
        print(f"rank {rank}: DETAIL-OK", flush=True)
    os._exit(0)

dist.init_process_group("weft")
pg = dist.group.WORLD
assert pg.name() == "weft", pg.name()
assert dist.get_backend(pg) == "weft"
assert pg._get_backend(cpu) is pg._get_backend(cuda) or \
    pg._get_backend(cpu).name() == pg._get_backend(cuda).name() == "weft"
all_reduce_ok(pg)

# DDP's logging reads the name from the group (torch's test_ddp_logging_data_cpu).
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
model(torch.randn(2, 4)).sum().backward()
logged = model._get_ddp_logging_data()
assert logged.get("backend_name") == "weft", logged.get("backend_name")

sub = dist.new_group(list(range(world)))
assert sub.name() == "weft", sub.name()
all_reduce_ok(sub)

part = dist.split_group(split_ranks=[list(range(0, world, 2)), list(range(1, world, 2))])
assert part.name() == "weft", part.name()
all_reduce_ok(part)

# Every rank but the last survives; the last leaves without a collective.
survivors = dist.shrink_group([world - 1], group=sub) if rank != world - 1 else None
if rank != world - 1:
    assert survivors.name() == "weft", survivors.name()
    assert dist.get_world_size(survivors) == world - 1
    all_reduce_ok(survivors)
print(f"rank {rank}: NAME-OK", flush=True)
os._exit(0)
