"""torch's timeouts reach weft: init_process_group(timeout=), dist.set_timeout and an
operation's options each bound a wait that no peer ends; WEFT_TIMEOUT wins over the
group timeout given at init (torch always fills one in); an ephemeral extension
lengthens the operations after it until the first of them completes. weft's errors name
the group."""
import re

import pytest

from launch import launch

# mode -> (seconds the wait should take, the WEFT_TIMEOUT of the run: far beyond the
# test's bound, except where it is the timeout under test; "init" unsets it)
CASES = {"init": (3.0, None), "env": (2.0, "2"), "set": (2.0, "300"), "op": (1.5, "300"),
         "ephemeral": (1.0, "300")}


@pytest.mark.parametrize("mode", list(CASES))
def test_timeout_bounds_a_wait_no_peer_ends(mode):
    expected, weft_timeout = CASES[mode]
    env = {"WEFT_TIMEOUT": weft_timeout} if weft_timeout else {}
    results = launch("timeout_worker.py", 2, args=[mode], env=env, timeout=90)
    code, out = results[0]
    assert code == 0, f"rank 0 exited {code}:\n{out}"
    assert "rank 0: RAISED" in out, out
    assert "timed out" in out, out
    # gloo's words, which torch's own timeout tests match (" (Timed out|closed|timeout) ")
    assert re.search(r"failed: Timed out - ", out), out
    # torch's Backend.get_error(): weft's failed state, read back (weftCommGetAsyncError)
    assert "rank 0: ERROR-BEFORE ErrorType.SUCCESS" in out, out
    assert "rank 0: ERROR-AFTER ErrorType.TIMEOUT" in out, out
    assert 'communicator "weft:' in out, out  # the group's name names weft's communicator
    if mode == "ephemeral":  # the late answer came within the extensions
        assert "rank 0: EXTENDED-OK" in out, out
    waited = float(re.search(r"rank 0: WAITED ([0-9.]+)", out).group(1))
    # (For "ephemeral" the upper bound also shows that the extensions, 6 s, ended with
    # the receive before.)
    assert expected - 0.5 <= waited < expected + 5.0, f"waited {waited} s:\n{out}"
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: DESTROYED" in out, f"rank {rank}:\n{out}"
