#!/usr/bin/env python3
"""DDP on weft with its gradient buckets in torch's memory ("plain") against weft's shared
memory ("shared": weft.torch.use_shared_memory, where their all-reduces run in a single
pass), interleaved run by run on this host.

    python3 bench/ddp_memory/run.py --world 2 --width 2048 --steps 30 --repeat 3

A WIDTH-wide MLP of three layers (2048: 8.4 M parameters, 34 MB of float32 gradients in
DDP's 25 MiB buckets). Per run, the median over STEPS steps (after 5 of warm-up) of the
step time and of the bucket all-reduces' time within it (a comm hook that waits for each,
so backward does not overlap them in either mode); the table gives the median (min-max)
over repetitions, in milliseconds, and shared/plain.
"""
import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests" / "python"))
from launch import launch  # noqa: E402


def run(mode, world, width, steps):
    results = launch(str(HERE / "ddp_memory_worker.py"), world, args=[mode, width, steps],
                     env={"WEFT_TIMEOUT": "60"}, timeout=600)
    got = {"step": [], "allreduce": []}
    for rank, (code, out) in enumerate(results):
        if code != 0 or f"rank {rank}: DDP-MEMORY-OK" not in out:
            raise RuntimeError(f"{mode}: rank {rank} exited {code}:\n{out}")
        for line in out.splitlines():
            if line.startswith("STEP_SECONDS"):
                got["step"].append(float(line.split()[1]))
            elif line.startswith("ALLREDUCE_SECONDS"):
                got["allreduce"].append(float(line.split()[1]))
    # A step is as slow as its slowest rank.
    return {k: max(v) for k, v in got.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    runs = {"plain": [], "shared": []}
    for _ in range(a.repeat):
        for mode in runs:  # interleaved: both modes see the same minutes of this machine
            runs[mode].append(run(mode, a.world, a.width, a.steps))

    def cell(mode, key):
        v = [r[key] * 1e3 for r in runs[mode]]
        return statistics.median(v), f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"

    print(f"DDP on weft, {a.world} ranks, width {a.width}, {a.steps} steps, {a.repeat} runs")
    print("| buckets in | step (ms) | bucket all-reduces (ms) |")
    print("| --- | ---: | ---: |")
    for mode in runs:
        print(f"| {mode} | {cell(mode, 'step')[1]} | {cell(mode, 'allreduce')[1]} |")
    for key in ("step", "allreduce"):
        print(f"shared/plain {key}: {cell('shared', key)[0] / cell('plain', key)[0]:.2f}")


if __name__ == "__main__":
    main()
