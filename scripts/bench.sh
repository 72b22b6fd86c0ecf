#!/usr/bin/env bash
# Quick start, command 1: set up, build, and run weft's main job — a 4-rank weft-bench
# of every collective on this machine (shared memory), results checked.
# Extra arguments go to weft-bench (e.g. --collective allreduce -e 64M).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
B=${WEFT_BUILD_DIR:-build}
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--collective all -b 8 -e 16M -f 4 -c 1)
exec "$B/tools/weftrun/weftrun" -n "${WEFT_NRANKS:-4}" "$B/tools/weft-bench/weft-bench" "${args[@]}"
