#!/usr/bin/env bash
# PyTorch's backend conformance suite on weft and on gloo (the reference), at world
# sizes 2 and 3, in one command:
#
#   bash tests/python/conformance/run.sh            # the CI subset (ci_subset.txt)
#   bash tests/python/conformance/run.sh --full     # every test of _DistTestBase
#
# BACKENDS and WORLD_SIZES override the matrix (e.g. BACKENDS=weft WORLD_SIZES=2).
# Each run writes junit XML under $OUT (default /tmp/weft-conformance); compare.py then
# prints pass/fail/skip per run and fails if a test passes on gloo but not on weft, or
# weft skips a test that expected_skips.txt does not name with a reason.
# Expects the weft package installed (tests/python/run.sh does that).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/weft-conformance}
BACKENDS=${BACKENDS:-"weft gloo"}
WORLD_SIZES=${WORLD_SIZES:-"2 3"}
mkdir -p "$OUT"
"$PY" -c "import expecttest" >/dev/null 2>&1 || "$PY" -m pip install -q expecttest

suite="$HERE/test_dist_suite.py"
if [ "${1:-}" = "--full" ]; then
  shift
  select=("$suite")
else
  # Node ids, not -k: -k test_broadcast would also select every test_broadcast_*.
  mapfile -t select < <(grep -v '^\s*#' "$HERE/ci_subset.txt" |
                        awk -v s="$suite" 'NF{print s "::TestDistBackendWithSpawn::" $1}')
fi

start=$(date +%s)
for ws in $WORLD_SIZES; do
  for backend in $BACKENDS; do
    echo "== conformance: BACKEND=$backend WORLD_SIZE=$ws"
    BACKEND=$backend WORLD_SIZE=$ws GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-lo} \
      OMP_NUM_THREADS=1 PYTORCH_PRINT_REPRO_ON_FAILURE=0 \
      "$PY" -m pytest -q -p no:cacheprovider "${select[@]}" \
      --junitxml="$OUT/$backend-$ws.xml" "$@" >"$OUT/$backend-$ws.log" 2>&1
    tail -1 "$OUT/$backend-$ws.log"
  done
done
echo "conformance: finished in $(( $(date +%s) - start )) s"
"$PY" "$HERE/compare.py" --expected-skips "$HERE/expected_skips.txt" --backends "$BACKENDS" \
  "$OUT" $WORLD_SIZES
