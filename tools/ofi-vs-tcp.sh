#!/usr/bin/env bash
# weft-bench allreduce over the ofi transport and over weft's own tcp transport, in the
# same run and interleaved (ofi, tcp, ofi, tcp, ...), and the ratio of their out-of-place
# bus bandwidths per size (median over the repeats): ofi / tcp.
#
# Usage: tools/ofi-vs-tcp.sh [BUILD_DIR] [NRANKS] [REPEATS]
# Env: WEFT_OFI_PROVIDER (default tcp;ofi_rxm), SIZES_MIN/SIZES_MAX (default 8K/64M).
set -euo pipefail
BUILD=${1:-build}
N=${2:-2}
REPEATS=${3:-3}
export WEFT_OFI_PROVIDER=${WEFT_OFI_PROVIDER:-"tcp;ofi_rxm"}
MINB=${SIZES_MIN:-8K}
MAXB=${SIZES_MAX:-64M}
TMP=$(mktemp -d /tmp/weft_ofi_vs_tcp.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

for i in $(seq 1 "$REPEATS"); do
  for t in ofi tcp; do
    WEFT_TRANSPORT=$t WEFT_TIMEOUT=120 timeout 600 "$BUILD/tools/weftrun/weftrun" -n "$N" \
      --timeout 500 -- "$BUILD/tools/weft-bench/weft-bench" -o allreduce -b "$MINB" -e "$MAXB" \
      -f 8 -n 20 -w 3 -c 1 --json "$TMP/$t.$i.json" >"$TMP/$t.$i.out" 2>&1 \
      || { echo "weft-bench over $t failed:"; cat "$TMP/$t.$i.out"; exit 1; }
  done
done

python3 - "$TMP" "$REPEATS" "$N" <<'EOF'
import json, statistics, sys
tmp, reps, n = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(t):
    per = {}
    for i in range(1, reps + 1):
        for r in json.load(open(f"{tmp}/{t}.{i}.json"))["results"]:
            per.setdefault(r["size_bytes"], []).append(r["out_of_place"]["busbw_gbps"])
    return {k: statistics.median(v) for k, v in per.items()}
ofi, tcp = load("ofi"), load("tcp")
print(f"allreduce float32 sum, {n} ranks, out-of-place busbw GB/s, median of {reps} "
      "interleaved runs each")
print(f"{'size (B)':>12} {'ofi':>9} {'tcp':>9} {'ofi/tcp':>8}")
for size in sorted(ofi):
    o, t = ofi[size], tcp.get(size, float("nan"))
    print(f"{size:>12} {o:>9.3f} {t:>9.3f} {o / t if t else float('nan'):>8.2f}")
EOF
