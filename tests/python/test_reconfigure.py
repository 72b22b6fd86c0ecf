"""torch's reconfigure API on weft, with gloo running the same script as the reference."""
import pytest

from launch import launch


@pytest.mark.parametrize("backend", ["weft", "gloo"])
def test_reconfigure_reorders_then_survives_the_leaders_death(backend):
    world = 3
    results = launch("reconfigure_worker.py", world, args=[backend], env={"WEFT_TIMEOUT": "10"},
                     timeout=120)
    for rank, (code, out) in enumerate(results[:-1]):
        assert code == 0, f"rank {rank}:\n{out}"
        for mark in ["LIST-OK", "FAILED-AS-EXPECTED", "RECONFIGURED", "SET-OK"]:
            assert f"rank {rank}: {mark}" in out, f"rank {rank} lacks {mark}:\n{out}"
        if backend == "weft":
            assert f"rank {rank}: BAD-INPUT-OK" in out, out
            assert f"rank {rank}: TIMEOUT-OK" in out, out
    code, out = results[-1]
    assert code == 3 and f"rank {world - 1}: LIST-OK" in out, out
