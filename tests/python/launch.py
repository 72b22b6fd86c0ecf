"""Starts N ranks of a worker script as plain processes with torch's env:// variables.

Plain processes (not torchrun) keep start-up short; every rank gets the same
MASTER_ADDR/PORT and its own RANK. Returns the processes' exit codes and output.
"""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(script, world_size, args=(), env=None, timeout=240):
    """Runs `script` on `world_size` ranks; returns [(returncode, output)] by rank.

    Ranks still running at `timeout` are killed and reported with returncode None, so a
    hang fails the test instead of stalling the suite.
    """
    port = free_port()
    procs = []
    for rank in range(world_size):
        e = dict(os.environ)
        # torch's flight recorder dumps its trace before a failed op's error reaches the
        # caller (3.6-4.8 s per failure on a 2-core VM): off, unless a test asks for it,
        # so that failure tests take and time weft's part only.
        e.setdefault("TORCH_FR_DUMP_ON_TIMEOUT", "0")
        e.update(env or {})
        e.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank),
                 LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=str(port), GLOO_SOCKET_IFNAME=e.get("GLOO_SOCKET_IFNAME", "lo"),
                 OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        procs.append(subprocess.Popen(
            [sys.executable, str(HERE / script), *map(str, args)], env=e,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    deadline = time.monotonic() + timeout
    results = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            results.append((p.returncode, out))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            results.append((None, out))
    return results
