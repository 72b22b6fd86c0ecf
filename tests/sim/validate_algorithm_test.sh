#!/usr/bin/env bash
# weft-bench records the algorithm each measurement ran, and weft-sim validate refuses to
# hold a prediction of one algorithm against a measurement of another.
#   validate_algorithm_test.sh WEFTRUN WEFT_BENCH WEFT_SIM
set -euo pipefail
WEFTRUN=$1 BENCH=$2 SIM=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { python3 -c "import json,sys; print(eval(sys.argv[2], {}, {'j': json.load(open(sys.argv[1]))}))" "$@"; }

# 1. weft-bench's JSON names the algorithm that ran (forced, so the name is known).
WEFT_ALGO=allreduce:ring timeout 120 "$WEFTRUN" -n 2 -- "$BENCH" --collective allreduce -b 4K -e 4K \
  -n 5 -w 1 --json "$dir/bench.json" > "$dir/bench.txt"
[ "$(field "$dir/bench.json" "j['results'][0]['out_of_place']['algorithm']")" = ring ] ||
  fail "weft-bench recorded $(field "$dir/bench.json" "j['results'][0]['out_of_place']")"

# 2. validate: a 1 MiB allreduce on 4 hosts. First without a recorded algorithm, to learn
# the planner's choice.
row() {  # ALGORITHM_JSON -> a weft-bench --json file with one measured row
  echo "{\"results\": [{\"op\": \"allreduce\", \"size_bytes\": 1048576, \"type\": \"float32\",
         \"out_of_place\": {\"time_us\": 9000.0$1}}]}"
}
sim() { timeout 60 "$SIM" validate --instance custom --nodes 4 --nic-gbit 1 --no-fit \
          --tolerance 1000000 "$@"; }
row "" > "$dir/none.json"
sim --measured "$dir/none.json" --json "$dir/v0.json" > "$dir/v0.txt" || fail "no algorithm recorded: $(cat "$dir/v0.txt")"
planned=$(field "$dir/v0.json" "j['rows'][0]['algorithm']")
[ -n "$planned" ] || fail "no predicted algorithm"
other=ring
[ "$planned" = ring ] && other=recursive_doubling

# The same algorithm: held as before.
row ", \"algorithm\": \"$planned\"" > "$dir/same.json"
sim --measured "$dir/same.json" > "$dir/same.txt" || fail "same algorithm refused: $(cat "$dir/same.txt")"
grep -q -- "<-- ran" "$dir/same.txt" && fail "same algorithm flagged"

# Another algorithm: flagged, not counted, and the run fails.
row ", \"algorithm\": \"$other\"" > "$dir/other.json"
if sim --measured "$dir/other.json" > "$dir/other.txt"; then fail "a mismatch passed: $(cat "$dir/other.txt")"; fi
grep -q -- "<-- ran $other" "$dir/other.txt" || fail "mismatch not named: $(cat "$dir/other.txt")"
grep -q "ran another algorithm" "$dir/other.txt" || fail "no summary of the mismatch"

# --predict-what-ran: the prediction is of the measured algorithm.
sim --measured "$dir/other.json" --predict-what-ran --json "$dir/v1.json" > "$dir/v1.txt" ||
  fail "--predict-what-ran: $(cat "$dir/v1.txt")"
[ "$(field "$dir/v1.json" "j['rows'][0]['algorithm']")" = "$other" ] || fail "--predict-what-ran predicted another"
[ "$(field "$dir/v1.json" "j['rows'][0]['measured_algorithm']")" = "$other" ] || fail "measured_algorithm"

# Two sweeps of one size that ran different algorithms cannot be merged.
set +e
sim --measured "$dir/same.json,$dir/other.json" > "$dir/mixed.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "one algorithm at a time" "$dir/mixed.txt" || fail "mixed sweeps (rc $rc): $(cat "$dir/mixed.txt")"
echo "validate_algorithm_test: planner picks $planned; $other flagged; all checks passed"
