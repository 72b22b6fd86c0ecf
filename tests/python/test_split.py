"""torch's split_group on weft: the split groups run every collective."""
import pytest

from launch import launch


@pytest.mark.parametrize("world_size", [3, 4])
def test_split_group_runs_every_collective(world_size):
    results = launch("split_worker.py", world_size, env={"WEFT_TIMEOUT": "30"}, timeout=180)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: SPLIT-OK" in out, f"rank {rank}:\n{out}"
