"""The recovery benchmark (bench/recovery/run.py) at 3 ranks: a rank dies during DDP
training and the survivors continue on a shrunk group, on a re-initialised one, on the
group re-formed by torch's reconfigure, and a fresh job of the survivors' size starts.
The worker checks that the survivors' parameters agree after the recovery; this checks
that every way back ran and was timed. DDP on a
shrunk weft group crashed inside torch before weft.torch registered such groups as custom
backends (python/weft/torch.py)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_recovery_benchmark_runs_every_way_back():
    cmd = [sys.executable, str(ROOT / "bench" / "recovery" / "run.py"), "--worlds", "3",
           "--repeat", "1", "--kill-step", "2", "--steps-after", "2", "--timeout", "120"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| 3 |")]
    assert len(rows) == 4, r.stdout
    for row, way in zip(rows, ["shrink_group", "abort + init_process_group", "_reconfigure",
                               "fresh start"]):
        assert way in row, row
        figures = [c.strip() for c in row.split("|")[3:-1] if c.strip()]
        assert figures, row
        for f in figures:  # "median (min-max)", positive seconds
            assert float(f.split()[0]) > 0, row
