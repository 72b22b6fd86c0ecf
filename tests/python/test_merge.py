"""merge_remote_group: single-rank weft jobs join into one weft group through a store."""
from launch import launch


def test_three_jobs_merge_into_one_group():
    results = launch("merge_worker.py", 3, args=[3], env={"WEFT_TIMEOUT": "30"}, timeout=120)
    merged = sorted(line for _, out in results for line in out.splitlines()
                    if line.startswith("MERGED"))
    assert merged == [f"MERGED rank {r} of 3" for r in range(3)], results
    assert all(code == 0 for code, _ in results), results


def test_a_process_beyond_the_merged_size_is_refused():
    results = launch("merge_worker.py", 3, args=[2], env={"WEFT_TIMEOUT": "30"}, timeout=120)
    outs = [out for _, out in results]
    assert sum("MERGED" in out for out in outs) == 2, outs
    refused = [out for out in outs if "REFUSED" in out]
    assert len(refused) == 1 and "rank 2 of a merged group of 2" in refused[0], outs
    assert all(code == 0 for code, _ in results), results
