"""The completion hook and waitForPendingWorks at 2 and 3 ranks."""
import pytest

from launch import launch


@pytest.mark.parametrize("world_size", [2, 3])
def test_completion_hook_and_wait_for_pending_works(world_size):
    results = launch("hooks_worker.py", world_size, env={"WEFT_TIMEOUT": "30"}, timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: HOOKS-OK" in out, f"rank {rank}:\n{out}"
