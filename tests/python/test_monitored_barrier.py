"""dist.monitored_barrier on weft: gloo's protocol and messages, within bounded time."""
import re

from launch import launch


def run(mode):
    # launch() turns torch's flight-recorder dump on failure off: the times are weft's.
    results = launch("monitored_barrier_worker.py", 3, args=[mode],
                     env={"WEFT_TIMEOUT": "30"}, timeout=120)
    assert all(code == 0 for code, _ in results), results
    return [out for _, out in results]


def took(out, rank):
    return float(re.search(rf"rank {rank}: TOOK ([0-9.]+)", out).group(1))


def test_passes_when_all_arrive_and_names_the_rank_that_did_not():
    outs = run("pass")
    for rank in range(3):
        assert f"rank {rank}: ALL-PASSED" in outs[rank], outs[rank]
    assert "rank 0: RAISED" in outs[0], outs[0]
    assert "Rank 2 failed to pass monitoredBarrier in 1000 ms" in outs[0], outs[0]
    assert 0.9 <= took(outs[0], 0) < 3.0, outs[0]
    # Rank 1 arrived; rank 0's failure (weft's notice to its peers) ends its wait.
    assert ("Rank 1 successfully reached monitoredBarrier, but received errors while "
            "waiting for send/recv from rank 0") in outs[1], outs[1]
    assert took(outs[1], 1) < 3.0, outs[1]


def test_wait_all_ranks_names_every_missing_rank():
    out = run("all")[0]
    assert "Ranks 1, 2 failed to pass monitoredBarrier in 500 ms" in out, out
    assert 0.4 <= took(out, 0) < 3.0, out


def test_a_zero_timeout_runs_out_at_once():
    out = run("zero")[0]
    assert "Rank 0 timed out in monitoredBarrier" in out, out
    assert took(out, 0) < 1.0, out
