#!/usr/bin/env bash
# weft-sim compare --reference nccl: a row for every instance, node count and size; the
# ratio column is weft's busbw over the NCCL reference's; weft's side is exactly what
# `weft-sim collective` predicts for the same cluster and size, and NCCL's what
# `weft-sim collective --model nccl` does; each node count ends with its summary line;
# `collective --explain` prints the planner's reason; bad options are usage errors (exit 2)
# that name the option.
# Usage: reference_test.sh WEFT_SIM
set -euo pipefail
SIM=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$SIM" compare --reference nccl --instances p5.48xlarge,p4d.24xlarge --nodes 2,2048 \
  -b 1M -e 4G -f 8 --json "$TMP/ref.json" >"$TMP/ref.txt"
cat "$TMP/ref.txt"
for n in 2 2048; do
  [ "$(grep -c "^# $n nodes: weft >= NCCL at [0-9]* of 5 sizes; lowest weft/NCCL" "$TMP/ref.txt")" = 2 ] ||
    fail "no summary line for $n nodes on each instance"
done
"$SIM" collective --instance p5.48xlarge --nodes 2048 -b 1M -e 4G -f 8 --json "$TMP/weft.json" >/dev/null
"$SIM" collective --instance p5.48xlarge --nodes 2048 -b 1M -e 4G -f 8 --model nccl \
  --json "$TMP/nccl.json" >/dev/null
python3 - "$TMP" <<'PY' || fail "the JSON rows"
import json, sys
tmp = sys.argv[1]
rows = json.load(open(f"{tmp}/ref.json"))["rows"]
sizes = [1 << 20, 8 << 20, 64 << 20, 512 << 20, 4 << 30]
want = {(i, n, b) for i in ("p5.48xlarge", "p4d.24xlarge") for n in (2, 2048) for b in sizes}
got = {(r["instance"], r["nodes"], r["bytes"]) for r in rows}
assert got == want, f"rows {sorted(got)} != {sorted(want)}"
for r in rows:
    assert r["weft_busbw_gbps"] > 0 and r["nccl_busbw_gbps"] > 0, r
    assert abs(r["weft_over_nccl"] - r["weft_busbw_gbps"] / r["nccl_busbw_gbps"]) < 1e-9, r
    assert r["nccl_algorithm"].split("/")[0] in ("ring", "tree", "nvls_tree"), r
    assert r["weft_segments"] == 0 or r["weft_algorithm"].endswith("_pipelined"), r
weft = {r["bytes"]: r for r in json.load(open(f"{tmp}/weft.json"))["rows"]}
nccl = {r["bytes"]: r for r in json.load(open(f"{tmp}/nccl.json"))["rows"]}
for r in rows:
    if r["instance"] != "p5.48xlarge" or r["nodes"] != 2048:
        continue
    w, n = weft[r["bytes"]], nccl[r["bytes"]]
    assert w["algorithm"] == r["weft_algorithm"] and w["segments"] == r["weft_segments"], (w, r)
    assert abs(w["busbw_gbps"] - r["weft_busbw_gbps"]) < 1e-9 * w["busbw_gbps"], (w, r)
    assert abs(n["busbw_gbps"] - r["nccl_busbw_gbps"]) < 1e-9 * n["busbw_gbps"], (n, r)
    assert n["algorithm"] == "nccl:" + r["nccl_algorithm"], (n, r)
print(f"{len(rows)} rows checked; 2048-node p5 rows match `collective` and `collective --model nccl`")
PY

# collective --explain: the planner's reason under each row, every candidate with its time,
# and the segments of the pipelined one it took.
"$SIM" collective --instance p5.48xlarge --nodes 4 -b 8G -e 8G --explain >"$TMP/explain.txt"
grep -q "^#   planner: cost model for 8192 MiB on 4 hosts x 8 ranks" "$TMP/explain.txt" ||
  fail "collective --explain printed no reason: $(cat "$TMP/explain.txt")"
for a in hierarchical hierarchical_pipelined hierarchical_rabenseifner ring; do
  grep -q "[:,] $a [0-9.]* us" "$TMP/explain.txt" || fail "--explain does not weigh $a"
done
grep -Eq "hierarchical_pipelined in [0-9]+ segments" "$TMP/explain.txt" ||
  fail "--explain does not give the segments"

usage() {  # expected-message args...
  local want=$1 rc=0
  shift
  "$SIM" compare "$@" >"$TMP/out" 2>&1 || rc=$?
  [ "$rc" = 2 ] || fail "'compare $*' exited $rc, not 2"
  grep -q -- "$want" "$TMP/out" || fail "'compare $*' did not say '$want': $(cat "$TMP/out")"
}
usage "--nodes: '0'" --reference nccl --instances p5.48xlarge --nodes 0
usage "--nodes: 'x'" --reference nccl --instances p5.48xlarge --nodes 2,x
usage "--reference" --reference gloo --instances p5.48xlarge
usage "no-such" --reference nccl --instances no-such --nodes 2
usage "-b/--minbytes" --reference nccl --instances p5.48xlarge --nodes 2 -b 1Q
echo PASS
