"""startCoalescing/endCoalescing: batch_isend_irecv and _coalescing_manager at 2 and 3 ranks."""
import pytest

from launch import launch


@pytest.mark.parametrize("world_size", [2, 3])
def test_batch_isend_irecv_and_coalescing_manager(world_size):
    results = launch("coalescing_worker.py", world_size, env={"WEFT_TIMEOUT": "30"},
                     timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: COALESCING-OK" in out, f"rank {rank}:\n{out}"
