"""ProcessGroup.abort() from another thread ends a blocked operation on every rank."""
import re

from launch import launch


def test_abort_from_another_thread_returns_every_rank_in_bounded_time():
    results = launch("abort_worker.py", 2, env={"WEFT_TIMEOUT": "300"}, timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0, f"rank {rank} exited {code}:\n{out}"
        assert f"rank {rank}: RAISED" in out, out
        assert "weftAborted" in out or "abort" in out.lower(), out
        waited = float(re.search(rf"rank {rank}: WAITED ([0-9.]+)", out).group(1))
        # Aborted after 1 s; weft promises the pending requests fail within ~100 ms.
        assert waited < 1.0 + 5.0, f"rank {rank} waited {waited} s"
        assert waited >= 0.9, f"rank {rank} returned before the abort ({waited} s)"
        assert "LATER-OP-RAN" not in out and f"rank {rank}: LATER" in out, out
        assert f"rank {rank}: DESTROYED" in out, out
