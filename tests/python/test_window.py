"""torch's one-sided windows (dist._new_window) on weft's (weftWinCreate), one host."""
import pytest

from launch import launch


@pytest.mark.parametrize("world", [2, 3])
def test_put_signal_wait_ring(world):
    results = launch("window_worker.py", world, args=["ring"], env={"WEFT_TIMEOUT": "20"},
                     timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: RING-OK" in out, f"rank {rank}:\n{out}"


def test_an_ordinary_tensor_on_one_rank_fails_every_rank_naming_it():
    results = launch("window_worker.py", 3, args=["plain"], env={"WEFT_TIMEOUT": "20"},
                     timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: REFUSED" in out and "PLAIN-OK" in out, out


def test_a_wait_for_a_dead_peer_fails_naming_it():
    results = launch("window_worker.py", 3, args=["dies"], env={"WEFT_TIMEOUT": "20"},
                     timeout=120)
    code, out = results[0]
    assert code == 0 and "rank 0: PEER-GONE" in out, out
    assert results[2][0] == 3, results[2][1]
