#!/usr/bin/env bash
# weft-sim scale: one row per node count, each the same prediction `weft-sim collective`
# makes for that cluster, with the simulator's own wall time; JSON and SVG written; bad
# node counts refused; PNG plots checked pixel by pixel, other plot names refused.
#   scale_test.sh WEFT_SIM
set -euo pipefail
SIM=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout 120 "$SIM" scale --instance p4d.24xlarge --node-counts 2,8 -b 64M --repeat 2 \
  --json "$dir/scale.json" --plot "$dir/scale.svg" > "$dir/scale.txt" || fail "scale: $(cat "$dir/scale.txt")"
grep -q "<svg" "$dir/scale.svg" || fail "no SVG"
for nodes in 2 8; do
  timeout 120 "$SIM" collective --instance p4d.24xlarge --nodes "$nodes" -b 64M -e 64M \
    --json "$dir/c$nodes.json" > /dev/null || fail "collective --nodes $nodes"
  python3 - "$dir/scale.json" "$dir/c$nodes.json" "$nodes" <<'PY' || fail "nodes $nodes differ"
import json, sys
scale = json.load(open(sys.argv[1]))
coll = json.load(open(sys.argv[2]))
nodes = int(sys.argv[3])
row = [r for r in scale["rows"] if r["nodes"] == nodes]
assert len(row) == 1, scale["rows"]
row = row[0]
want = coll["rows"][0]
assert row["ranks"] == nodes * 8, row
assert row["algorithm"] == want["algorithm"], (row, want)
assert abs(row["predicted_us"] - want["time_us"]) <= 1e-6 * want["time_us"], (row, want)
assert 0 < row["wall_min_ms"] <= row["wall_median_ms"], row
PY
done
if timeout 30 "$SIM" scale --node-counts 8,0 > /dev/null 2>&1; then fail "node count 0 accepted"; fi
# A .png plot is the same chart rasterised (twice the SVG's 720x440), when weft-sim was
# built with librsvg; without it the name is refused with the reason and nothing written.
if timeout 60 "$SIM" scale --node-counts 2,8 -b 1M --plot "$dir/s.png" > "$dir/png.txt" 2>&1; then
  python3 "$(dirname "$0")/png_check.py" "$dir/s.png" 1440 880 || fail "bad PNG plot"
else
  grep -q "built without librsvg" "$dir/png.txt" || fail "PNG plot failed: $(cat "$dir/png.txt")"
  [ ! -e "$dir/s.png" ] || fail "a refused .png file was written"
  echo "scale_test: this weft-sim writes SVG only (built without librsvg)"
fi
# Any other extension is refused before anything is simulated.
if timeout 30 "$SIM" scale --node-counts 2 -b 1M --plot "$dir/s.jpg" > "$dir/jpg.txt" 2>&1; then
  fail "a .jpg plot was accepted"
fi
grep -q "name the file \*.svg or \*.png" "$dir/jpg.txt" || fail "no reason for the refused .jpg: $(cat "$dir/jpg.txt")"
grep -q "weft-sim scale" "$dir/jpg.txt" && fail "simulated before refusing the .jpg name"
[ ! -e "$dir/s.jpg" ] || fail "a .jpg file was written"
if timeout 30 "$SIM" scale --node-counts 8,,16 > /dev/null 2>&1; then fail "empty node count accepted"; fi
echo "scale_test: 2 node counts agree with weft-sim collective"
