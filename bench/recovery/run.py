#!/usr/bin/env python3
"""Time to recover from a rank's death during DDP training on weft: the survivors going on
on a shrunk group (shrink_group), against the same survivors aborting and initialising a
new group (abort + re-init), against re-forming the group from handles exchanged at the
start (torch's reconfigure), and, for scale, a job of the survivors' size started anew.

    python3 bench/recovery/run.py --worlds 4 8 --repeat 3 [--json out.json]

Each run launches WORLD ranks of recovery_worker.py on this host (weft over shm); the last
rank dies at step --kill-step. Per run, from the workers' wall-clock events:
  detect   the death until the last survivor's step has failed
  recover  from then until every survivor has finished a step on its new group
  total    detect + recover
and for "fresh": from launching WORLD-1 processes to every rank's first finished step
(interpreter start, import, rendezvous, DDP). Modes are interleaved within each repetition;
the table gives the median (min-max) over repetitions, in seconds.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests" / "python"))
from launch import free_port, launch  # noqa: E402


def events(out):
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "EVENT":
            got[parts[1]] = float(parts[2])
    return got


def run_failure(mode, world, kill_step, steps_after, timeout):
    env = {"WEFT_TIMEOUT": "30", "RESTART_PORT": str(free_port())}
    results = launch(str(HERE / "recovery_worker.py"), world,
                     args=[mode, kill_step, steps_after], env=env, timeout=timeout)
    victim = events(results[-1][1])
    survivors = results[:-1]
    for rank, (code, out) in enumerate(survivors):
        if code != 0 or f"rank {rank}: RECOVERY-OK" not in out:
            raise RuntimeError(f"{mode} at {world} ranks: rank {rank} exited {code}:\n{out}")
    ev = [events(out) for _, out in survivors]
    detected = max(e["detected"] for e in ev)
    recovered = max(e["recovered"] for e in ev)
    step = statistics.median(
        float(line.split()[1]) for _, out in survivors for line in out.splitlines()
        if line.startswith("STEP_SECONDS"))
    return {"detect": detected - victim["killed"], "recover": recovered - detected,
            "total": recovered - victim["killed"], "step": step}


def run_fresh(world, timeout):
    launched = time.time()
    results = launch(str(HERE / "recovery_worker.py"), world, args=["fresh", 0, 0],
                     timeout=timeout)
    for rank, (code, out) in enumerate(results):
        if code != 0:
            raise RuntimeError(f"fresh start of {world} ranks: rank {rank} exited {code}:\n{out}")
    return {"total": max(events(out)["first_step"] for _, out in results) - launched}


def span(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worlds", type=int, nargs="+", default=[4, 8])
    modes = ["shrink", "reinit", "reconfigure", "fresh"]
    ap.add_argument("--modes", nargs="+", default=modes, choices=modes)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kill-step", type=int, default=5)
    ap.add_argument("--steps-after", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", help="also write every run's figures here")
    a = ap.parse_args()
    if min(a.worlds) < 2 or a.kill_step < 1 or a.steps_after < 1 or a.repeat < 1:
        ap.error("--worlds must be >= 2, --kill-step, --steps-after and --repeat >= 1")

    runs = []
    for rep in range(a.repeat):
        for world in a.worlds:
            for mode in a.modes:
                if mode == "fresh":
                    r = run_fresh(world - 1, a.timeout)
                else:
                    r = run_failure(mode, world, a.kill_step, a.steps_after, a.timeout)
                r.update(mode=mode, world=world, rep=rep)
                runs.append(r)
                print(f"# {mode} world {world} rep {rep}: " +
                      ", ".join(f"{k} {v:.3f}" for k, v in r.items() if isinstance(v, float)),
                      file=sys.stderr, flush=True)
    print("| ranks (one dies) | way back | detect s | recover s | total s | step s before |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for world in a.worlds:
        for mode in a.modes:
            rs = [r for r in runs if r["world"] == world and r["mode"] == mode]
            if mode == "fresh":
                print(f"| {world} | fresh start of {world - 1} ranks to the first step | | | "
                      f"{span([r['total'] for r in rs])} | |")
                continue
            name = {"shrink": "shrink_group", "reinit": "abort + init_process_group",
                    "reconfigure": "_reconfigure"}[mode]
            print(f"| {world} | {name} | {span([r['detect'] for r in rs])} | "
                  f"{span([r['recover'] for r in rs])} | {span([r['total'] for r in rs])} | "
                  f"{span([r['step'] for r in rs])} |")
    if a.json:
        Path(a.json).write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
