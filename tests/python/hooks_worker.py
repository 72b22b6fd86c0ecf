"""_register_on_completion_hook, _wait_for_pending_works, the flight recorder's keyed
completion hook and abort hooks on weft (CPU tensors)."""
import json
import os
import threading

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import OpType, _dump_fr_trace_json

import weft.torch  # noqa: F401

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("weft")
pg = dist.group.WORLD
infos = []
hook_threads = set()


def hook(info):
    infos.append((info.op_type, info.seq, info.active_duration, info.time_started,
                  info.time_finished))
    hook_threads.add(threading.get_ident())


pg._register_on_completion_hook(hook)
assert pg._has_hooks()
try:
    pg._register_on_completion_hook(hook)
    raise AssertionError("a second hook was accepted")
except RuntimeError as e:
    assert "already registered" in str(e), e

x = torch.ones(1 << 20)
works = [dist.all_reduce(x, async_op=True), dist.broadcast(torch.ones(10), 0, async_op=True)]
right, left = (rank + 1) % world, (rank - 1) % world
got = torch.empty(5)
works += [dist.isend(torch.full((5,), float(rank)), right), dist.irecv(got, left)]
works.append(dist.barrier(async_op=True))
# Every op issued so far has completed once this returns, hooks included: nothing waited
# on the Works themselves.
pg._wait_for_pending_works()
assert len(infos) == 5, infos
assert all(w.is_completed() for w in works)
types = sorted(str(i[0]) for i in infos)
expected = sorted(str(t) for t in [OpType.ALLREDUCE, OpType.BROADCAST, OpType.SEND, OpType.RECV,
                                   OpType.BARRIER])
assert types == expected, (types, expected)
collectives = [i for i in infos if i[0] in (OpType.ALLREDUCE, OpType.BROADCAST, OpType.BARRIER)]
seqs = {str(i[0]): i[1] for i in collectives}
assert seqs[str(OpType.ALLREDUCE)] < seqs[str(OpType.BROADCAST)] < seqs[str(OpType.BARRIER)], seqs
for op_type, seq, duration, started, finished in infos:
    assert duration.total_seconds() >= 0 and finished >= started, (op_type, duration)
assert threading.get_ident() not in hook_threads, "hooks run on weft's completer thread"
assert torch.equal(got, torch.full((5,), float(left))) and x[0].item() == world


# torch attaches its flight recorder to every group (FlightRecorderHook); it registers a
# keyed completion hook, and retires an entry when weft reports its Work complete. Every
# op above has completed; a receive whose sender waits on this rank's dump has not.
def fr_states():
    trace = json.loads(_dump_fr_trace_json(includeCollectives=True, backend="weft"))
    return [(e["profiling_name"], e["state"]) for e in trace.get("entries", [])]


done_states = fr_states()
assert len(done_states) >= 5 and all(s == "completed" for _, s in done_states), done_states
store = dist.distributed_c10d._get_default_store()
if rank == 0:
    late = torch.empty(3)
    pending = dist.irecv(late, 1)
    states = fr_states()
    assert states[-1] == ("weft:recv 0<-1", "scheduled"), states
    store.set("fr-dumped", "1")
    pending.wait()
    pg._wait_for_pending_works()
    assert fr_states()[-1] == ("weft:recv 0<-1", "completed"), fr_states()
elif rank == 1:
    store.wait(["fr-dumped"])
    dist.isend(torch.ones(3), 0).wait()

# Abort hooks, on a group of their own: run when the group's first op fails (weft fails
# the communicator there), and again before abort().
sub = dist.new_group()
assert sub.supports_abort_hooks
calls = []
sub.register_abort_hook(7, lambda: calls.append("seven"))
sub.register_abort_hook(3, lambda: calls.append("three"))
sub.unregister_abort_hook(7)
try:
    sub.unregister_abort_hook(7)
    raise AssertionError("an unknown hook id was unregistered")
except RuntimeError as e:
    assert "no hook with id 7" in str(e), e
# Rank 0 expects 10 floats, rank 1 sends 5: the receive fails, and the barrier after it
# on every rank.
if rank == 0:
    bad = dist.irecv(torch.empty(10), 1, group=sub)
elif rank == 1:
    bad = dist.isend(torch.ones(5), 0, group=sub)
failed = 0
for work in ([bad] if rank < 2 else []) + [dist.barrier(group=sub, async_op=True)]:
    try:
        work.wait()
    except RuntimeError:
        failed += 1
assert failed >= 1, "nothing failed"
sub._wait_for_pending_works()
assert calls == ["three"], calls
sub.abort()
assert calls == ["three", "three"], calls
print(f"rank {rank}: HOOKS-OK", flush=True)
dist.destroy_process_group()  # waits for pending works again, as torch does with hooks
