"""DDP: 50 steps with weft and with gloo from the same seed; loss curves match and the
final parameters are identical on every rank. Also with DDP's buckets in weft's shared
memory (weft.torch.use_shared_memory), where their all-reduces take the single pass."""
import json

import pytest
import torch

from launch import launch


def check_runs(runs, world, tmp_path):
    for rank, (rc, output) in enumerate(runs):
        assert rc == 0, f"rank {rank} exited with {rc}:\n{output[-4000:]}"
    params = [torch.load(tmp_path / f"rank{rank}.pt") for rank in range(world)]
    for rank in range(1, world):
        assert torch.equal(params[0], params[rank]), f"rank {rank}: parameters differ from rank 0"
    for rank in range(world):
        r = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert len(r["weft"]) == len(r["gloo"]) == 50
        for step, (w, g) in enumerate(zip(r["weft"], r["gloo"])):
            # the sum order of 3 ranks may differ from gloo's, so not bit-identical
            assert w == pytest.approx(g, rel=1e-4, abs=1e-5), f"rank {rank} step {step}"
        assert sum(r["weft"][-5:]) < 0.8 * sum(r["weft"][:5]), "the model did not learn"


@pytest.mark.parametrize("world", [2, 3])
def test_ddp_matches_gloo(world, tmp_path):
    runs = launch("ddp_worker.py", world, env={"WEFT_TEST_OUT": str(tmp_path)}, timeout=240)
    check_runs(runs, world, tmp_path)


@pytest.mark.parametrize("world,shared", [(2, True), (3, True), (2, False)])
def test_ddp_buckets_in_shared_memory_take_the_single_pass(world, shared, tmp_path):
    # A 256-wide MLP (77k parameters): DDP's first bucket holds all of it (300 KB), its
    # rebuilt ones the 256 x 256 layer (262 KB) and the rest (33 KB), the first two over
    # the single-pass path's 64 KiB. Without use_shared_memory (the control), none runs
    # the single pass.
    env = {"WEFT_TEST_OUT": str(tmp_path), "WEFT_TEST_WIDTH": "256",
           "WEFT_TEST_BUCKET_MB": "0.1", "WEFT_DEBUG": "INFO"}
    if shared:
        env["WEFT_TEST_SHARED_MIN_BYTES"] = str(64 << 10)
    runs = launch("ddp_worker.py", world, env=env, timeout=240)
    check_runs(runs, world, tmp_path)
    # weft logs each size class's plan once (rank 0).
    plans = [line for line in runs[0][1].splitlines() if "planner: allreduce" in line]
    single = [p for p in plans if "-> single_pass" in p and "registered on every rank" in p]
    if shared:
        assert single, "no all-reduce of DDP's buckets took the single pass:\n" + "\n".join(plans)
    else:
        assert not single, single
