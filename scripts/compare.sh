#!/usr/bin/env bash
# The peer comparison of issue 3 in one command: weft vs Open MPI vs Gloo on this machine,
# same collectives, sizes, dtype (float32 sum) and timing rule, plus the limits (one-core
# memcpy and `a += b`, iperf3 socket bandwidth). Installs what is missing (Debian),
# builds, runs every library --repeat times (interleaved, so load drift hits all alike),
# and merges medians into a table, JSON and a plot (bench/peers/merge.py).
#
#   bash scripts/compare.sh [--ranks N] [--ops all|allreduce,...] [-b 8] [-e 16M] [-f 2]
#                           [-n 20] [-w 5] [--repeat 3] [--mem both|plain|shared]
#                           [--netns [--rate 5gbit]] [--out DIR] [--no-install] [--no-build]
#
# Default: 2 ranks on this host; weft over shared memory, Open MPI over shared memory
# (btl self,vader), Gloo over TCP loopback (it has no shared-memory transport). weft runs
# twice per repeat, on plain buffers and on registered ones (weft-bench --mem shared:
# weftMemAlloc + weftCommRegister); --mem picks one. The table adds each collective's
# model limit (bench/peers/model_limit.py) and the fraction of it weft reached.
# --netns: 2 ranks in two network namespaces joined by a veth pair; weft tcp, Open MPI
# btl tcp, Gloo tcp, iperf3 across the veth. Needs root. --rate shapes both veth ends with
# tc tbf (issue 3's 5 Gbit/s target); iperf3 then measures the shaped line. Results go to --out (default
# $WEFT_BUILD_DIR/compare/<N>r-<mode>): compare.md, compare.json, compare.png|svg.
# --no-build: use the binaries already in $WEFT_BUILD_DIR as they are (a developer's
# build tree, where setup.sh would build the whole test suite first).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

RANKS=2 OPS=all MINB=8 MAXB=16M STEP=2 ITERS=20 WARMUP=5 REPEAT=3 NETNS=0 INSTALL=1 BUILD=1
MEM=both
RATE=""
OUT=""
usage() { sed -n '8,10p' "$0" | sed 's/^# *//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) RANKS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    -b) MINB=$2; shift 2 ;;
    -e) MAXB=$2; shift 2 ;;
    -f) STEP=$2; shift 2 ;;
    -n) ITERS=$2; shift 2 ;;
    -w) WARMUP=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --netns) NETNS=1; shift ;;
    --rate) RATE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-install) INSTALL=0; shift ;;
    --no-build) BUILD=0; shift ;;
    *) usage ;;
  esac
done
if [ -n "$RATE" ] && [ "$NETNS" != 1 ]; then
  echo "compare: --rate shapes the veth of --netns" >&2; exit 2
fi
case $MEM in both|plain|shared) ;; *) echo "compare: --mem both|plain|shared, not '$MEM'" >&2; exit 2 ;; esac
if [ "$NETNS" = 1 ] && [ "$MEM" != plain ]; then
  [ "$MEM" = shared ] && { echo "compare: --mem shared needs one host, not --netns" >&2; exit 2; }
  MEM=plain  # registered buffers are shared memory: one host only
fi
if [ "$NETNS" = 1 ] && [ "$RANKS" != 2 ]; then
  echo "compare: --netns runs 2 ranks, one per namespace" >&2; exit 2
fi

# --- install the peers (only what is missing) ---------------------------------------
if [ "$INSTALL" = 1 ]; then
  missing=()
  for p in openmpi-bin libopenmpi-dev libgloo-dev iperf3 python3-matplotlib; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "compare: installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    # iperf3's package asks whether to start a daemon; the answer is no.
    echo "iperf3 iperf3/start_daemon boolean false" | $SUDO debconf-set-selections 2>/dev/null || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null \
      || echo "compare: note: some packages failed to install; missing peers are skipped"
  fi
fi

# --- build: weft, weft-bench, weftrun, the peers ----------------------------------------
B=${WEFT_BUILD_DIR:-build-compare}
export WEFT_BUILD_DIR=$B
if [ "$BUILD" = 1 ]; then
  # A fresh build dir of our own skips the test suite: the comparison needs none of it.
  if [ ! -f "$B/CMakeCache.txt" ] && command -v cmake >/dev/null; then
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_BUILD_TESTS=OFF >/dev/null
  fi
  bash scripts/setup.sh
  # setup.sh configured before MPI/Gloo may have been installed: reconfigure to find them.
  cmake "$B" >/dev/null && cmake --build "$B" -j"$(nproc)" --target weft_limit_probe
  for t in weft_peer_mpi_bench weft_peer_gloo_bench; do
    cmake --build "$B" -j"$(nproc)" --target "$t" >/dev/null 2>&1 || true
  done
fi
WEFTRUN=$B/tools/weftrun/weftrun
WEFTBENCH=$B/tools/weft-bench/weft-bench
MPIB=$B/bench/peers/weft_peer_mpi_bench
GLOOB=$B/bench/peers/weft_peer_gloo_bench
PROBE=$B/bench/peers/weft_limit_probe
HAVE_MPI=0; [ -x "$MPIB" ] && command -v mpirun >/dev/null && HAVE_MPI=1
HAVE_GLOO=0; [ -x "$GLOOB" ] && HAVE_GLOO=1
[ $HAVE_MPI = 1 ] || echo "compare: Open MPI bench not built: skipped"
[ $HAVE_GLOO = 1 ] || echo "compare: Gloo bench not built: skipped"

MODE=$([ "$NETNS" = 1 ] && echo "netns${RATE:+-$RATE}" || echo local)
OUT=${OUT:-$B/compare/${RANKS}r-$MODE}
mkdir -p "$OUT"
rm -f "$OUT"/*.json
TMP=$(mktemp -d /tmp/weft_compare.XXXXXX)
PIDS=()
LIMIT=900  # seconds per library run: a hung rank must not hang the comparison

cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  [ "$NETNS" = 1 ] && netns_destroy
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# weft-bench takes one collective or "all"; a list runs one after the other.
weft_ops() { [ "$OPS" = all ] && echo all || echo "${OPS//,/ }"; }
SIZES=(-b "$MINB" -e "$MAXB" -f "$STEP" -n "$ITERS" -w "$WARMUP")

# Waits for PIDS; fails if any rank failed.
wait_ranks() {
  local p rc=0
  for p in "${PIDS[@]}"; do wait "$p" || rc=$?; done
  PIDS=()
  return $rc
}

if [ "$NETNS" = 1 ]; then
  # shellcheck source=../tests/netns/netns_lib.sh
  . tests/netns/netns_lib.sh
  netns_create $RATE || { echo "compare: cannot set up the two namespaces (root needed)" >&2; exit 1; }
  NS=("${NETNS_NS[@]}") VETH=("${NETNS_VETH[@]}") ADDR=("${NETNS_ADDR[@]}")
  IN=("ip netns exec ${NS[0]}" "ip netns exec ${NS[1]}")
  export CMP_NS1=${NS[1]} CMP_ADDR1=${ADDR[1]}
fi

run_weft() {  # $1: repeat index
  local op k=$1
  for op in $(weft_ops); do
    if [ "$NETNS" = 1 ]; then
      local h port=$((29500 + RANDOM % 1000))
      for h in 0 1; do
        ${IN[$h]} timeout -k 5 $LIMIT env RANK=$h WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
          MASTER_ADDR="${ADDR[0]}" MASTER_PORT=$port WEFT_SOCKET_IFNAME="=${VETH[$h]}" \
          "$WEFTBENCH" --collective "$op" "${SIZES[@]}" -c 1 --json "$OUT/weft.$k.$op.json" \
          >"$TMP/weft.$h" 2>&1 &
        PIDS+=($!)
      done
      wait_ranks || { cat "$TMP"/weft.*; return 1; }
      cat "$TMP/weft.0"
    else
      local mem name
      for mem in plain shared; do
        [ "$MEM" = both ] || [ "$MEM" = "$mem" ] || continue
        name=weft; [ "$mem" = shared ] && name=weft_shared
        timeout -k 5 $LIMIT "$WEFTRUN" -n "$RANKS" "$WEFTBENCH" --collective "$op" "${SIZES[@]}" \
          -c 1 --mem "$mem" --json "$OUT/$name.$k.$op.json"
      done
    fi
  done
}

run_mpi() {
  local k=$1
  if [ "$NETNS" = 1 ]; then
    ${IN[0]} timeout -k 5 $LIMIT mpirun --allow-run-as-root -np 2 \
      --host "${ADDR[0]},${ADDR[1]}" --mca plm_rsh_agent "$ROOT/bench/peers/netns_rsh.sh" \
      --mca btl self,tcp --mca btl_tcp_if_include "${ADDR[0]%.*}.0/24" \
      --mca oob_tcp_if_include "${ADDR[0]%.*}.0/24" -x CMP_NS1 -x CMP_ADDR1 \
      "$ROOT/$MPIB" -o "$OPS" "${SIZES[@]}" --json "$OUT/openmpi.$k.json"
  else
    timeout -k 5 $LIMIT mpirun --oversubscribe --allow-run-as-root -np "$RANKS" \
      --mca btl self,vader "$MPIB" -o "$OPS" "${SIZES[@]}" --json "$OUT/openmpi.$k.json"
  fi
}

run_gloo() {
  local k=$1 r store
  store=$(mktemp -d "$TMP/gloo.XXXXXX")
  for ((r = 0; r < RANKS; r++)); do
    local wrap="" host=127.0.0.1
    if [ "$NETNS" = 1 ]; then wrap=${IN[$r]}; host=${ADDR[$r]}; fi
    $wrap timeout -k 5 $LIMIT env GLOO_RANK=$r GLOO_SIZE="$RANKS" GLOO_STORE_DIR="$store" \
      GLOO_HOST=$host "$GLOOB" -o "$OPS" "${SIZES[@]}" --json "$OUT/gloo.$k.json" \
      >"$TMP/gloo.$r" 2>&1 &
    PIDS+=($!)
  done
  wait_ranks || { cat "$TMP"/gloo.*; return 1; }
  cat "$TMP/gloo.0"
}

# Socket bandwidth, both directions at once (a ring step sends and receives together).
run_iperf() {
  command -v iperf3 >/dev/null || { echo "compare: iperf3 missing: no socket probe"; return 0; }
  local port=$((20000 + RANDOM % 20000)) srv=127.0.0.1 sw="" cw=""
  if [ "$NETNS" = 1 ]; then srv=${ADDR[1]}; sw=${IN[1]}; cw=${IN[0]}; fi
  $sw timeout 30 iperf3 -s -1 -B "$srv" -p $port >/dev/null 2>&1 &
  local spid=$!
  sleep 0.5
  $cw timeout 30 iperf3 -c "$srv" -p $port -t 5 --bidir -J >"$OUT/iperf.json" 2>/dev/null \
    || { echo "compare: iperf3 failed"; rm -f "$OUT/iperf.json"; }
  wait $spid 2>/dev/null || true
}

echo "compare: $RANKS ranks, $MODE, ops $OPS, sizes $MINB..$MAXB x$STEP, $ITERS iters," \
     "$REPEAT repeats; load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/run.txt"
"$PROBE" --json "$OUT/limits.json"
run_iperf
for ((k = 1; k <= REPEAT; k++)); do
  echo "compare: repeat $k/$REPEAT"
  run_weft "$k"
  [ $HAVE_MPI = 1 ] && run_mpi "$k"
  [ $HAVE_GLOO = 1 ] && run_gloo "$k"
done
echo "compare: load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/run.txt"

if [ "$NETNS" = 1 ]; then
  TRANSPORT="two network namespaces over veth, tcp (all three)"
  WHERE="veth between the namespaces"
  if [ -n "$RATE" ]; then
    TRANSPORT="$TRANSPORT, veth shaped to $RATE each way (tc tbf)"
    WHERE="$WHERE, shaped to $RATE"
  fi
else
  TRANSPORT="one host; weft shm, Open MPI vader, Gloo tcp loopback"
  WHERE="loopback"
fi
# Debian's matplotlib lives in /usr/bin/python3, which need not be the python3 on PATH.
PY=python3
if ! $PY -c 'import matplotlib' 2>/dev/null && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  PY=/usr/bin/python3
fi
$PY bench/peers/merge.py "$OUT" --nranks "$RANKS" --transport "$TRANSPORT" \
  --iperf-where "$WHERE"
echo "compare: table in $OUT/compare.md"
