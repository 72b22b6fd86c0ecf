"""weft.torch.empty and share_memory_(): CPU tensors in shared memory take the single pass."""
import os

import pytest

from launch import launch


@pytest.mark.parametrize("world_size", [2, 3])
def test_shared_tensors_run_the_single_pass(world_size):
    results = launch("shared_worker.py", world_size,
                     env={"WEFT_TIMEOUT": "30", "WEFT_DEBUG": "INFO"}, timeout=180)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: SHARED-OK" in out, f"rank {rank}:\n{out}"
        if rank > 0:
            # The allreduce where rank 0's tensor is an ordinary one falls back, and the
            # ranks whose tensors were shared say so.
            assert "buffers registered here but not on rank(s) 0" in out, out
    # Rank 0 logs the planner's choices: the 1 MiB allreduce, broadcast and allgather run
    # the single pass; the reduce-scatter of world x 16 KiB is under the path's 64 KiB.
    plans = [line for line in results[0][1].splitlines() if "planner:" in line]
    for coll in ("allreduce", "broadcast", "allgather"):
        assert any(f"planner: {coll} " in p and "-> single_pass" in p for p in plans), (
            f"no single-pass {coll} in:\n" + "\n".join(plans))
    assert any("planner: reducescatter" in p for p in plans), plans
    assert not any("reducescatter" in p and "-> single_pass" in p for p in plans), plans
    # The reduce is the share_memory_() one: found through PROCMAP_QUERY (Linux 6.11).
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    if (major, minor) >= (6, 11):
        assert any("planner: reduce " in p and "-> single_pass" in p for p in plans), (
            "the share_memory_() reduce did not run the single pass:\n" + "\n".join(plans))
