#!/usr/bin/env bash
# The flight recorder and weft-doctor on a real straggler: 3 ranks, rank 2 sleeps before
# its 4th allreduce (seq 4 counting the communicator's first barrier as 0); at 1 s every
# rank dumps on SIGUSR1. weft-doctor must name rank 2 as behind, and ranks 0 and 1 as
# waiting inside allreduce seq 4 (rank 1 for rank 2 directly, or through rank 2's
# neighbours), and --json must agree.
#   doctor_test.sh WEFTRUN STRAGGLER DOCTOR
set -euo pipefail
WEFTRUN=$1 STRAGGLER=$2 DOCTOR=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
WEFT_FLIGHT_RECORDER_DIR=$dir WEFT_TIMEOUT=60 \
  "$WEFTRUN" -n 3 --timeout 60 -- "$STRAGGLER" 2 3 3 1
ls "$dir"
[[ $(ls "$dir"/weft-fr-*.json | wc -l) -eq 3 ]] || { echo "expected 3 dumps"; exit 1; }
out=$("$DOCTOR" "$dir")
echo "$out"
grep -q "verdict: rank(s) 2 are behind: they never reached allreduce seq 4" <<<"$out"
grep -q "rank 0 .*inside allreduce seq 4 .*waiting for rank" <<<"$out"
grep -q "rank 2 .*last finished allreduce seq 3" <<<"$out"
json=$("$DOCTOR" --json "$dir")
grep -q '"behind": \[' <<<"$json"
python3 - "$json" <<'PY'
import json, sys
v = json.loads(sys.argv[1])
assert len(v) == 1 and v[0]["behind"] == [2] and v[0]["missing"] == [], v
PY
echo "doctor_test: ok"
