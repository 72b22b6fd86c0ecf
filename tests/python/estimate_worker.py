"""torch's collective time estimator (dist._time_estimator) on weft: the ops inside are
estimated by weft's cost model, not run."""
import os

import torch
import torch.distributed as dist

import weft.torch  # noqa: F401

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
dist.init_process_group("weft")
backend = dist.group.WORLD._get_backend(torch.device("cpu"))
assert backend._supports_time_estimate

small, large = torch.ones(256), torch.ones(4 << 20)


def estimate(fn):
    with dist._time_estimator() as est:
        fn()
    return est.estimated_time


one_small = estimate(lambda: dist.all_reduce(small))
one_large = estimate(lambda: dist.all_reduce(large))
two_large = estimate(lambda: (dist.all_reduce(large), dist.all_reduce(large)))
mixed = estimate(lambda: (dist.all_gather_into_tensor(torch.empty(world * 256), small),
                          dist.barrier()))
assert 0 < one_small < one_large, (one_small, one_large)
assert abs(two_large - 2 * one_large) <= 1e-3 * one_large, (two_large, one_large)
assert mixed > 0, mixed
# Nothing ran: the tensors are as they were, and the ranks are still in step.
assert torch.equal(small, torch.ones(256)) and torch.equal(large[:10], torch.ones(10))
dist.all_reduce(small)
assert torch.equal(small, torch.full((256,), float(world))), small[:3]

# recvAnysource has no estimate: refused by name, which ends the estimate, so the barrier
# after it runs for real (a rank that still estimated it would leave the others waiting).
try:
    with dist._time_estimator():
        dist.recv(torch.empty(1))
    raise AssertionError("recv from any source was estimated")
except RuntimeError as e:
    assert "recvAnysource" in str(e), e
# Nor has a sparse all-reduce, which waits for its own all-gathers.
try:
    with dist._time_estimator():
        dist.all_reduce(torch.sparse_coo_tensor([[0]], [1.0], (2,)))
    raise AssertionError("a sparse all-reduce was estimated")
except RuntimeError as e:
    assert "weft allreduce (sparse)" in str(e) and "time estimate is ended" in str(e), e
dist.barrier()
print(f"rank {rank}: ESTIMATE-OK {one_small:.1f} {one_large:.1f} us", flush=True)
dist.destroy_process_group()
