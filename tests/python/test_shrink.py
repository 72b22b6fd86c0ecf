"""torch's shrink_group on weft (weftCommShrink): survivors continue on the smaller group."""
import pytest

from launch import launch


@pytest.mark.parametrize("mode", ["healthy", "dead"])
def test_shrink_group_excludes_the_last_rank(mode):
    world = 3
    results = launch("shrink_worker.py", world, args=[mode], env={"WEFT_TIMEOUT": "5"},
                     timeout=120)
    for rank, (code, out) in enumerate(results[:-1]):
        assert code == 0 and f"rank {rank}: SHRINK-OK" in out, f"rank {rank}:\n{out}"
        if mode == "dead":
            assert f"rank {rank}: FAILED-AS-EXPECTED" in out, out
    code, out = results[-1]
    assert code == (3 if mode == "dead" else 0), out
