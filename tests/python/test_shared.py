"""weft.torch.empty, share_memory_() and use_shared_memory(): CPU tensors in shared memory
take the single pass."""
import os
import subprocess
import sys

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


def _mapping_of(address):
    """The /proc/self/maps line of the mapping that holds `address`."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            if lo <= address < hi:
                return line.strip()
    raise AssertionError(f"{address:#x} is in no mapping")


def test_use_shared_memory_places_large_cpu_tensors_in_weft_memory():
    # In a process of its own: the allocator is torch's, process-wide.
    script = """
import torch, weft.torch as wt
from test_shared import _mapping_of
wt.use_shared_memory(1 << 20)
assert wt.shared_memory_min_bytes() == 1 << 20
big, small = torch.empty(1 << 18), torch.empty(100)  # 1 MiB and 400 B of float32
assert "memfd:weft-buffer" in _mapping_of(big.data_ptr()), _mapping_of(big.data_ptr())
assert "memfd:" not in _mapping_of(small.data_ptr()), _mapping_of(small.data_ptr())
big.fill_(2.0)
assert big.sum().item() == 2.0 * (1 << 18)
wt.use_default_memory()
assert wt.shared_memory_min_bytes() == 0
later = torch.empty(1 << 18)
assert "memfd:" not in _mapping_of(later.data_ptr()), _mapping_of(later.data_ptr())
assert big[-1].item() == 2.0  # still valid after the allocator went back
del big  # freed by weftMemFree, though the allocator is no longer installed
for bad in (0, -1, 1.5, True):
    try:
        wt.use_shared_memory(bad)
        raise AssertionError(f"min_bytes={bad!r} was accepted")
    except ValueError as e:
        assert "min_bytes must be an int >= 1" in str(e), e
print("ALLOCATOR-OK")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.abspath(__file__)), timeout=120)
    assert out.returncode == 0 and "ALLOCATOR-OK" in out.stdout, out.stdout + out.stderr
