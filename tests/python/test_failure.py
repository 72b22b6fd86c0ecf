"""A failing rank surfaces as an exception with weft's message on the others, within a
short WEFT_TIMEOUT, instead of a hang."""
import json

import pytest

from launch import launch

TIMEOUT_S = 5


@pytest.mark.parametrize("mode,transport", [("die", "auto"), ("die", "tcp"), ("stall", "auto")])
def test_failing_rank_raises_on_the_others(mode, transport, tmp_path):
    env = {"WEFT_TEST_OUT": str(tmp_path), "WEFT_TIMEOUT": str(TIMEOUT_S), "FAIL_MODE": mode,
           "WEFT_TRANSPORT": transport}
    runs = launch("failure_worker.py", 3, env=env, timeout=60)
    messages = []
    for rank in (0, 2):
        rc, output = runs[rank]
        assert rc == 0, f"rank {rank} exited with {rc} (None: hung):\n{output[-3000:]}"
        caught = json.loads((tmp_path / f"rank{rank}.json").read_text())["caught"]
        assert caught is not None, f"rank {rank} finished its loop without an error"
        assert caught["is_runtime_error"], caught
        assert caught["message"].startswith("weft allreduce failed:"), caught
        assert caught["seconds_to_error"] < TIMEOUT_S + 5, caught
        messages.append(caught["message"])
    # A survivor reports the peer it was waiting for, which may be another survivor that
    # already gave up; at least one of them names the real cause.
    cause = "rank 1" if mode == "die" else "WEFT_TIMEOUT"
    assert any(cause in m for m in messages), messages
