#!/usr/bin/env bash
# weft-bench allreduce over the ofi transport and over weft's own tcp transport, in the
# same run and interleaved (ofi, tcp, ofi, tcp, ...), and the ratio of their out-of-place
# bus bandwidths per size (median over the repeats): ofi / tcp.
#
# Usage: tools/ofi-vs-tcp.sh [BUILD_DIR] [NRANKS] [REPEATS]
# Env: WEFT_OFI_PROVIDER (default tcp;ofi_rxm), SIZES_MIN/SIZES_MAX (default 8K/32M: with
#      the factor 8, 8 KiB, 64 KiB, 512 KiB, 4 MiB, 32 MiB), ITERS (default 20; 200 with
#      NETNS_RATE, so that the shaper's 256 KiB bucket carries a small part of each size's
#      bytes: with 50, tcp ran 8 KiB at twice the shaped rate, a CPU-bound comparison).
#      NETNS_RATE=2gbit: instead of loopback, two network namespaces joined by a veth pair
#      shaped with tc tbf to that rate in each direction (tests/netns/netns_lib.sh); the
#      first half of the ranks on one, the rest on the other, bootstrapped the torchrun
#      way. Both transports then run every pair over the veth or the namespace's loopback
#      alike (WEFT_TRANSPORT forces one transport for every peer). Needs root.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-build}" && pwd)
N=${2:-2}
REPEATS=${3:-3}
export WEFT_OFI_PROVIDER=${WEFT_OFI_PROVIDER:-"tcp;ofi_rxm"}
MINB=${SIZES_MIN:-8K}
MAXB=${SIZES_MAX:-32M}
RATE=${NETNS_RATE:-}
ITERS=${ITERS:-$([ -n "$RATE" ] && echo 200 || echo 20)}
BENCH=("$BUILD/tools/weft-bench/weft-bench" -o allreduce -b "$MINB" -e "$MAXB" -f 8 -n "$ITERS"
       -w 3 -c 1)
TMP=$(mktemp -d /tmp/weft_ofi_vs_tcp.XXXXXX)
PIDS=()
if [ -n "$RATE" ]; then
  # shellcheck source=../tests/netns/netns_lib.sh
  source "$HERE/../tests/netns/netns_lib.sh"
fi
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  if [ -n "$RATE" ]; then netns_destroy; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "$RATE" ]; then
  netns_create "$RATE" || { echo "ofi-vs-tcp: cannot set up the namespaces"; exit 1; }
  echo "two hosts: ${NETNS_NS[0]} and ${NETNS_NS[1]}, veth shaped to $RATE (tbf)"
fi

# One weft-bench run over transport $1, results in $2.json, output in $2.out.
PORT=29600
run_once() {
  local t=$1 out=$2
  if [ -z "$RATE" ]; then
    WEFT_TRANSPORT=$t WEFT_TIMEOUT=120 timeout 600 "$BUILD/tools/weftrun/weftrun" -n "$N" \
      --timeout 500 -- "${BENCH[@]}" --json "$out.json" >"$out.out" 2>&1
    return
  fi
  PORT=$((PORT + 1))
  local half=$(( (N + 1) / 2 )) r h l rc=0
  PIDS=()
  for r in $(seq 0 $((N - 1))); do
    h=$(( r < half ? 0 : 1 ))
    l=$(( h == 0 ? r : r - half ))
    ip netns exec "${NETNS_NS[$h]}" timeout -k 5 600 \
      env RANK=$r WORLD_SIZE=$N LOCAL_RANK=$l LOCAL_WORLD_SIZE=$(( h == 0 ? half : N - half )) \
          MASTER_ADDR="${NETNS_ADDR[0]}" MASTER_PORT=$PORT WEFT_TRANSPORT=$t WEFT_TIMEOUT=120 \
          WEFT_SOCKET_IFNAME="=${NETNS_VETH[$h]}" \
          "${BENCH[@]}" --json "$out.json" >"$out.out.$r" 2>&1 &
    PIDS+=($!)
  done
  for r in $(seq 0 $((N - 1))); do wait "${PIDS[$r]}" || rc=$?; done
  PIDS=()
  cat "$out".out.* >"$out.out"
  return $rc
}

for i in $(seq 1 "$REPEATS"); do
  for t in ofi tcp; do
    run_once "$t" "$TMP/$t.$i" \
      || { echo "weft-bench over $t failed:"; cat "$TMP/$t.$i.out"; exit 1; }
  done
done

python3 - "$TMP" "$REPEATS" "$N" "${RATE:-loopback}" <<'PY'
import json, statistics, sys
tmp, reps, n, where = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(t):
    per = {}
    for i in range(1, reps + 1):
        for r in json.load(open(f"{tmp}/{t}.{i}.json"))["results"]:
            per.setdefault(r["size_bytes"], []).append(r["out_of_place"]["busbw_gbps"])
    return {k: statistics.median(v) for k, v in per.items()}
ofi, tcp = load("ofi"), load("tcp")
place = "one host, loopback" if where == "loopback" else f"2 namespaces, veth shaped to {where}"
print(f"allreduce float32 sum, {n} ranks, {place}; out-of-place busbw GB/s, median of {reps} "
      "interleaved runs each")
print(f"{'size (B)':>12} {'ofi':>9} {'tcp':>9} {'ofi/tcp':>8}")
for size in sorted(ofi):
    o, t = ofi[size], tcp.get(size, float("nan"))
    print(f"{size:>12} {o:>9.3f} {t:>9.3f} {o / t if t else float('nan'):>8.2f}")
PY
