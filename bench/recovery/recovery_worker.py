"""One rank of the recovery benchmark (bench/recovery/run.py): DDP training on weft in
which the last rank dies at step KILL_STEP, and the survivors go on, either on the group
shrunk without it (torch's shrink_group, weftCommShrink), on a new group made by
aborting the old one and initialising again through a fresh rendezvous (what an elastic
agent does when it restarts the job in place), or on the same group re-formed by torch's
reconfigure from the handles the ranks exchanged at the start (enable_reconfigure).

argv: mode (shrink | reinit | reconfigure | fresh), kill_step, steps_after. "fresh" is a job started
anew on WORLD_SIZE ranks that takes one step: what a relaunch costs once its processes
are up. Prints "EVENT name wall_time" lines (time.time(), one host) that run.py reads,
and "rank R: RECOVERY-OK" once the survivors' parameters agree after steps_after steps.
"""
import copy
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.distributed_c10d import SHRINK_ABORT, shrink_group
from torch.nn.parallel import DistributedDataParallel as DDP

import weft.torch  # noqa: F401  (registers the backend)

mode, kill_step, steps_after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
torch.manual_seed(0)


def event(name):
    print(f"EVENT {name} {time.time():.6f}", flush=True)


def make_model():
    # 2.1 M parameters (8.4 MB of gradients, two DDP buckets at its default 25 MB cap
    # after the first step): big enough that a step is a real allreduce, small enough
    # for 8 ranks on 2 cores.
    return nn.Sequential(nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 1024))


def step(ddp, opt, i, r):
    g = torch.Generator().manual_seed(1000 * i + r)
    x = torch.randn(32, 1024, generator=g)
    loss = ddp(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def checksum(model):
    return torch.stack([p.detach().double().sum() for p in model.parameters()]).sum()


event("start")
if mode == "reconfigure":
    # Every rank's handle, exchanged once through torch's store; the survivors re-form
    # the group from them later without another exchange.
    dist.init_process_group("weft", enable_reconfigure=True)
    store = dist.distributed_c10d._get_default_store()
    store.set(f"handle/{rank}", dist._get_reconfigure_handle())
    handles = [store.get(f"handle/{r}").decode() for r in range(world)]
    dist._reconfigure(uuid=1, handles=handles).wait()
else:
    dist.init_process_group("weft")
model = make_model()
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
event("ready")
if mode == "fresh":
    step(ddp, opt, 0, rank)
    event("first_step")
    dist.destroy_process_group()
    sys.exit(0)

t0 = time.time()
for i in range(kill_step):
    step(ddp, opt, i, rank)
print(f"STEP_SECONDS {(time.time() - t0) / kill_step:.6f}", flush=True)
if rank == world - 1:
    event("killed")
    os._exit(9)  # dies without a word; the survivors learn it through weft

try:
    step(ddp, opt, kill_step, rank)
    print(f"rank {rank}: STEP-WITH-DEAD-RANK-SUCCEEDED", flush=True)
    sys.exit(1)
except Exception as e:  # noqa: BLE001 - the failure is what is being timed
    event("detected")
    print(f"rank {rank}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)

# The old DDP's reducer holds hooks on the parameters and the broken group: train a copy.
model = copy.deepcopy(ddp.module)
del ddp, opt
if mode == "shrink":
    group = shrink_group([world - 1], shrink_flags=SHRINK_ABORT)
    new_rank = dist.get_rank(group)
elif mode == "reinit":
    dist.group.WORLD.abort()
    dist.destroy_process_group()
    addr = os.environ["MASTER_ADDR"]
    dist.init_process_group("weft", init_method=f"tcp://{addr}:{os.environ['RESTART_PORT']}",
                            rank=rank, world_size=world - 1)
    group = None
    new_rank = dist.get_rank()
elif mode == "reconfigure":
    dist._reconfigure(uuid=2, handles=handles[:-1]).wait()  # aborts the failed communicator
    group = None
    new_rank = dist.get_rank()
else:
    raise SystemExit(f"unknown mode {mode}")
event("regrouped")
ddp = DDP(model, process_group=group)  # broadcasts the parameters from the new rank 0
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
step(ddp, opt, kill_step, new_rank)
event("recovered")
for i in range(kill_step + 1, kill_step + steps_after):
    step(ddp, opt, i, new_rank)
sums = [torch.zeros((), dtype=torch.float64) for _ in range(world - 1)]
dist.all_gather(sums, checksum(model), group=group)
assert all(torch.equal(s, sums[0]) for s in sums), sums
print(f"rank {rank}: RECOVERY-OK", flush=True)
os._exit(0)  # the old group lost a rank; skip torch's exit-time teardown of it
