#!/usr/bin/env bash
# Clang's thread-safety analysis over every source file of the library and its tools
# (-Wthread-safety -Werror): each mutex-guarded member is GUARDED_BY its lock and each
# helper that needs a lock held says REQUIRES (src/core/mutex.h), and this build fails
# on any access the compiler cannot prove locked. GCC ignores the annotations, so this
# is the build that checks them. Syntax-only (the analysis runs in the front end): about
# two minutes on 2 cores, no objects written. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-tsa
start=$(date +%s)
# CUDA off: nvcc does not take clang's warning flags, and the .cu files hold no locks.
cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DWEFT_CUDA=OFF -DWEFT_BUILD_BENCH=OFF \
      -DWEFT_BUILD_TESTS=OFF >/dev/null
python3 - "$dir/compile_commands.json" <<'PY' | xargs -0 -P "$(nproc)" -n 1 bash -c
import json, os, shlex, sys
root = os.getcwd()
for e in json.load(open(sys.argv[1])):
    f = os.path.relpath(e["file"], root)
    if not (f.startswith("src/") or f.startswith("tools/")) or not f.endswith(".cc"):
        continue
    args = shlex.split(e["command"])
    # Drop the output: syntax only, with the analysis as errors.
    out = [a for i, a in enumerate(args) if a != "-o" and (i == 0 or args[i - 1] != "-o")]
    out += ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety"]
    cmd = "cd " + shlex.quote(e["directory"]) + " && " + shlex.join(out)
    sys.stdout.write(cmd + "\0")
PY
echo "thread-safety: clean in $(( $(date +%s) - start )) s"
