"""torch's reconfigure API (enable_reconfigure, _get_reconfigure_handle, _reconfigure) on
weft, and the same script on gloo as the reference. argv[1]: weft | gloo.

Three ranks: no communicator until the first reconfigure; a reconfigure with the handles
in reverse order gives every rank its position in that list; then the rank that is rank
0 of that communicator (old rank 2, whose weft store served its rendezvous) dies, and
the two survivors re-form a group from a set of their handles without it. On weft, a
reconfigure that one survivor never joins then fails at its timeout, and the next works.
"""
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

backend = sys.argv[1]
if backend == "weft":
    import weft.torch  # noqa: F401

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group(backend, enable_reconfigure=True, timeout=timedelta(seconds=20))
store = dist.distributed_c10d._get_default_store()
assert dist._supports_reconfigure()


def say(what):
    print(f"rank {rank}: {what}", flush=True)


def expect_error(fn, *words):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        for w in words:
            assert w in str(e), f"expected {w!r} in: {e}"
        return str(e)
    raise AssertionError(f"no error; expected one naming {words}")


def exchange(tag, members):
    """Every member's current handle, by old rank (torch's store: out of band for weft)."""
    store.set(f"{tag}/{rank}", dist._get_reconfigure_handle())
    return {r: store.get(f"{tag}/{r}").decode() for r in members}


# 1. No communicator yet: operations are refused, naming the cause.
words = ["call reconfigure()"] if backend == "weft" else []
expect_error(lambda: dist.all_reduce(torch.ones(2)), *words)

# 2. A list gives ranks by position: the reverse of the old order.
handles = exchange("first", range(world))
order = [handles[r] for r in reversed(range(world))]
work = dist._reconfigure(uuid=11, handles=order)
assert work.wait() and work.is_completed()
me = world - 1 - rank
assert dist.get_rank() == me and dist.get_world_size() == world, (dist.get_rank(), me)
t = torch.tensor([float(me + 1)])
dist.all_reduce(t)
assert t.item() == world * (world + 1) / 2, t
got = [torch.empty(1) for _ in range(world)]
dist.all_gather(got, torch.tensor([float(rank)]))
assert [g.item() for g in got] == [float(world - 1 - r) for r in range(world)], got
b = torch.tensor([float(rank)])
dist.broadcast(b, src=0)
assert b.item() == float(world - 1), b  # the new rank 0 is old rank world-1
say("LIST-OK")

# 3. Bad input is refused on weft without harming the communicator.
if backend == "weft":
    expect_error(lambda: dist._reconfigure(uuid=11, handles=order), "uuid 11 was used before")
    others = [h for h in order if h != handles[rank]]
    expect_error(lambda: dist._reconfigure(uuid=12, handles=others),
                 "handle is not among the 2 given")
    expect_error(lambda: dist._reconfigure(uuid=13, handles=order + ["gloo:0:1:127.0.0.1:1"]),
                 "handle 3", "not a weft handle")
    expect_error(lambda: dist._reconfigure(uuid=14, handles=order, hints={"x": "1"}),
                 "weft takes no hints")
    t = torch.ones(1)
    dist.all_reduce(t)
    assert t.item() == world, t
    say("BAD-INPUT-OK")

# 4. Old rank world-1 (rank 0 of this communicator) dies; the survivors find out through
# a collective and re-form from a set of their handles.
dying = world - 1
store.set(f"ready/{rank}", "1")
store.wait([f"ready/{r}" for r in range(world)])
if rank == dying:
    os._exit(3)
try:
    dist.all_reduce(torch.ones(1))
    say("ALLREDUCE-WITH-DEAD-RANK-SUCCEEDED")
except RuntimeError as e:
    say(f"FAILED-AS-EXPECTED {type(e).__name__}")
start = time.monotonic()
survivors = exchange("second", range(dying))
work = dist._reconfigure(uuid=12, handles=set(survivors.values()), timeout=timedelta(seconds=20))
work.wait()
say(f"RECONFIGURED in {time.monotonic() - start:.2f} s")
assert dist.get_world_size() == dying, dist.get_world_size()
if backend == "weft":  # a set: ranks by the handles' sorted order
    assert dist.get_rank() == sorted(survivors.values()).index(survivors[rank])
ranks = [torch.empty(1) for _ in range(dying)]
dist.all_gather(ranks, torch.tensor([float(dist.get_rank())]))
assert sorted(r.item() for r in ranks) == [float(r) for r in range(dying)], ranks
t = torch.full((3,), float(rank + 1))
dist.all_reduce(t)
assert torch.equal(t, torch.full((3,), float(sum(range(1, dying + 1))))), t
dist.barrier()
say("SET-OK")

# 5. weft: a reconfigure that a member never joins fails at its timeout and leaves the
# group without a communicator (get_error: COMM_ERROR) until the next one succeeds.
if backend == "weft":
    me = dist.get_rank()
    backend_obj = dist.group.WORLD._get_backend(torch.device("cpu"))
    if me == 0:
        start = time.monotonic()
        expect_error(lambda: dist._reconfigure(uuid=13, handles=sorted(survivors.values()),
                                               timeout=timedelta(seconds=1)),
                     "reconfigure (uuid 13, rank 0 of 2)")
        assert time.monotonic() - start < 10, time.monotonic() - start
        assert str(backend_obj.get_error()) == "ErrorType.COMM_ERROR", backend_obj.get_error()
        expect_error(lambda: dist.all_reduce(torch.ones(1)), "the last reconfigure failed")
        store.set("timed-out", "1")
    else:
        store.wait(["timed-out"], timedelta(seconds=60))
    dist._reconfigure(uuid=14, handles=set(survivors.values())).wait()
    assert str(backend_obj.get_error()) == "ErrorType.SUCCESS", backend_obj.get_error()
    t = torch.ones(2)
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((2,), float(dying))), t
    say("TIMEOUT-OK")
os._exit(0)  # skip torch's exit-time teardown of a group whose member died
