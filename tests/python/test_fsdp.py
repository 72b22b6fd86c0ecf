"""FSDP2 (fully_shard) on CPU over weft: 5 steps match an unsharded local reference, also
with FSDP's all-gather buffers in weft's shared memory (allocate_tensor)."""
import json

import pytest

from launch import launch


@pytest.mark.parametrize("world,pg_alloc", [(2, "0"), (3, "0"), (2, "1"), (3, "1")])
def test_fsdp_matches_unsharded_reference(world, pg_alloc, tmp_path):
    """pg_alloc: FSDP's all-gather buffers from weft's allocate_tensor."""
    runs = launch("fsdp_worker.py", world,
                  env={"WEFT_TEST_OUT": str(tmp_path), "WEFT_TEST_PG_ALLOC": pg_alloc},
                  timeout=180)
    for rank, (rc, output) in enumerate(runs):
        assert rc == 0, f"rank {rank} exited with {rc}:\n{output[-4000:]}"
    for rank in range(world):
        r = json.loads((tmp_path / f"rank{rank}.json").read_text())
        if "skip" in r:
            pytest.skip(r["skip"])
        assert r["max_diff"] < 1e-5, f"rank {rank}: FSDP parameters differ by {r['max_diff']}"
        if pg_alloc == "1":
            assert r["pg_allocs"] > 0, f"rank {rank}: FSDP never called allocate_tensor"
