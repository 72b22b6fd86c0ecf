"""weft's groups say "weft" where torch asks a group its backend's name."""
from launch import launch


def test_groups_are_named_weft():
    results = launch("group_name_worker.py", 3, args=["weft"], env={"WEFT_TIMEOUT": "30"},
                     timeout=180)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: NAME-OK" in out, f"rank {rank}:\n{out}"


def test_group_shared_with_gloo_keeps_both_backends():
    results = launch("group_name_worker.py", 2, args=["shared"], env={"WEFT_TIMEOUT": "30"},
                     timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: SHARED-OK" in out, f"rank {rank}:\n{out}"


def test_debug_detail_checks_collectives_on_a_weft_group():
    results = launch("group_name_worker.py", 2, args=["detail"],
                     env={"WEFT_TIMEOUT": "30", "TORCH_DISTRIBUTED_DEBUG": "DETAIL"},
                     timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0 and f"rank {rank}: DETAIL-OK" in out, f"rank {rank}:\n{out}"
