"""startTimeEstimate/endTimeEstimate (torch's _time_estimator) at 2 and 3 ranks."""
import pytest

from launch import launch


@pytest.mark.parametrize("world_size", [2, 3])
def test_time_estimator(world_size):
    results = launch("estimate_worker.py", world_size,
                     env={"WEFT_TIMEOUT": "30",
                          "WEFT_COST_MODEL": "intra_alpha_us=2,intra_gbps=80"},
                     timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: ESTIMATE-OK" in out, f"rank {rank}:\n{out}"
