"""Every op on a weft group against gloo on the same inputs, world sizes 2, 3 and 4.

One launch per world size runs every case (ops_worker.py); each test below checks one
op's cases on every rank, so a failure names the op, the case and the rank.
"""
import json

import pytest

from launch import launch

OPS = ["allreduce", "broadcast", "reduce", "gather", "scatter", "all_gather",
       "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
       "all_to_all_single", "all_to_all", "send_recv", "barrier", "async"]


@pytest.fixture(scope="module", params=[2, 3, 4], ids=lambda w: f"world{w}")
def results(request, tmp_path_factory):
    world = request.param
    out = tmp_path_factory.mktemp(f"ops{world}")
    runs = launch("ops_worker.py", world, env={"WEFT_TEST_OUT": str(out)}, timeout=240)
    for rank, (rc, output) in enumerate(runs):
        assert rc == 0, f"rank {rank} exited with {rc}:\n{output[-4000:]}"
    return world, [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]


@pytest.mark.parametrize("op", OPS)
def test_op_matches_gloo(results, op):
    world, per_rank = results
    for rank, cases in enumerate(per_rank):
        mine = {k: v for k, v in cases.items() if k.split("/")[0] == op}
        assert mine, f"no {op} cases ran on rank {rank}"
        failed = {k: v for k, v in mine.items() if v != "ok"}
        assert not failed, f"world {world} rank {rank}:\n" + "\n".join(
            f"{k}: {v}" for k, v in failed.items())
