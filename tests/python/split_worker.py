"""split_group on weft (supportsSplitting/split): every collective on the split groups."""
import os

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("weft")
assert dist.group.WORLD._get_backend(torch.device("cpu")).supports_splitting
# Groups of the even and of the odd ranks (at 3 ranks: [0, 2] and [1]).
parts = [list(range(0, world, 2)), list(range(1, world, 2))]
mine = parts[rank % 2]
g = dist.split_group(split_ranks=parts)
assert g is not None and dist.get_world_size(g) == len(mine), (g, mine)
me, n = dist.get_rank(g), len(mine)
assert me == mine.index(rank)

t = torch.tensor([float(rank + 1)] * 4)
dist.all_reduce(t, group=g)
assert torch.equal(t, torch.full((4,), float(sum(r + 1 for r in mine)))), t

b = torch.full((3,), float(rank)) if me == 0 else torch.zeros(3)
dist.broadcast(b, group_src=0, group=g)
assert torch.equal(b, torch.full((3,), float(mine[0]))), b

out = [torch.empty(2) for _ in range(n)]
dist.all_gather(out, torch.full((2,), float(rank)), group=g)
assert [o[0].item() for o in out] == [float(r) for r in mine], out

rs = torch.empty(2)
dist.reduce_scatter_tensor(rs, torch.arange(2.0 * n), group=g)
assert torch.equal(rs, torch.arange(2.0 * n)[2 * me:2 * me + 2] * n), rs

a2a = torch.empty(n)
dist.all_to_all_single(a2a, torch.full((n,), float(rank)), group=g)
assert torch.equal(a2a, torch.tensor([float(r) for r in mine])), a2a

gathered = [torch.empty(1) for _ in range(n)] if me == 0 else None
dist.gather(torch.tensor([float(rank)]), gathered, group_dst=0, group=g)
if me == 0:
    assert [x.item() for x in gathered] == [float(r) for r in mine], gathered

sc = torch.empty(1)
dist.scatter(sc, [torch.tensor([float(i)]) for i in range(n)] if me == 0 else None,
             group_src=0, group=g)
assert sc.item() == float(me), sc

if n > 1:  # a ring inside the group, by group ranks
    recv = torch.empty(5)
    reqs = dist.batch_isend_irecv([
        dist.P2POp(dist.isend, torch.full((5,), float(rank)), group=g,
                   group_peer=(me + 1) % n),
        dist.P2POp(dist.irecv, recv, group=g, group_peer=(me - 1) % n)])
    for r in reqs:
        r.wait()
    assert torch.equal(recv, torch.full((5,), float(mine[(me - 1) % n]))), recv

dist.barrier(group=g)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: SPLIT-OK", flush=True)
