"""examples/ddp_train.py runs under torchrun and under weftrun with backend weft."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from launch import free_port

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ddp_train.py"
WEFTRUN = ROOT / os.environ.get("WEFT_BUILD_DIR", "build") / "tools" / "weftrun" / "weftrun"


def check_output(out):
    losses = [float(x) for x in re.findall(r"loss (\d+\.\d+)", out)]
    assert len(losses) >= 5, out[-3000:]
    assert losses[-1] < 0.8 * losses[0], f"loss did not fall: {losses}"
    assert re.search(r"weft: 2 ranks, 60 steps, [\d.]+ ms/step", out), out[-3000:]


def test_example_under_torchrun():
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
           "--master-port", str(free_port()), str(EXAMPLE), "--backend", "weft", "--steps", "60"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    check_output(r.stdout)


def test_example_under_weftrun():
    if not WEFTRUN.exists():
        pytest.skip(f"{WEFTRUN} is not built (cmake --build build --target weftrun)")
    cmd = [str(WEFTRUN), "-n", "2", sys.executable, str(EXAMPLE), "--backend", "weft",
           "--steps", "60"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    check_output(r.stdout)
