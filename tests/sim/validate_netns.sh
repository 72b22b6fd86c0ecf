#!/usr/bin/env bash
# weft-sim against weft itself: N network namespaces ("hosts", one rank each) joined by
# veth pairs to a bridge in a "switch" namespace, every link shaped with tc to a known
# rate in both directions (a full-duplex NIC); weft-bench runs over tcp, torchrun-style
# (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
# WEFT_SOCKET_IFNAME); then `weft-sim validate` predicts the same sweep for a custom
# cluster with the shaped figures, fits alpha on the small sizes and prints the error
# table. Fails when a size >= --check-from is off by more than --tolerance.
#
# Usage: validate_netns.sh --bench WEFT_BENCH --sim WEFT_SIM [--hosts 2,4,8] [--gbit 1]
#          [--delay-us 0] [--ops allreduce,allgather] [-b 1K] [-e 64M] [--light]
#          [--out DIR] [--tolerance 10] [--check-from 1M] [--repeat 2] [--ranks-per-host 1]
#          [--predict-what-ran]
# --predict-what-ran: predict the algorithm each measurement ran (weft-sim validate's flag),
# for runs with WEFT_ALGO set. Set WEFT_COST_MODEL (all five figures) to have weft-bench's
# planner and weft-sim's choose with the same figures: a pipelined algorithm's segments.
# With --ranks-per-host R > 1 the ranks of a host share its shaped link (the model's NIC
# sharing) and talk to each other over shm (WEFT_TRANSPORT=auto), as on a real node.
# Each sweep runs --repeat times; weft-sim keeps the fastest of each size (other jobs on
# a shared machine only add time).
# Needs root (CAP_SYS_ADMIN/CAP_NET_ADMIN) and the tbf qdisc; otherwise SKIP, exit 77.
# Namespaces are always deleted (trap); addresses exist only inside the namespaces;
# every process runs under `timeout`.
set -u
BENCH="" SIM="" HOSTS="2,4" GBIT=1 DELAY_US=0 OPS="allreduce,allgather" MINB=1K MAXB=64M
OUT="" TOL=10 CHECK_FROM=1M LIGHT=0 REPEAT=2 RPH=1 WHAT_RAN=()
while [ $# -gt 0 ]; do
  case $1 in
    --bench) BENCH=$2; shift ;;  --sim) SIM=$2; shift ;;
    --hosts) HOSTS=$2; shift ;;  --gbit) GBIT=$2; shift ;;
    --delay-us) DELAY_US=$2; shift ;;  --ops) OPS=$2; shift ;;
    -b) MINB=$2; shift ;;  -e) MAXB=$2; shift ;;  --out) OUT=$2; shift ;;
    --tolerance) TOL=$2; TOL_GIVEN=1; shift ;;  --check-from) CHECK_FROM=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --ranks-per-host) RPH=$2; shift ;;
    --light) LIGHT=1 ;;
    --predict-what-ran) WHAT_RAN=(--predict-what-ran) ;;
    *) echo "validate_netns.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$BENCH" ] && [ -x "$SIM" ] || { echo "usage: $0 --bench WEFT_BENCH --sim WEFT_SIM ..." >&2; exit 2; }
# The ctest version (< 60 s): 4 hosts at 0.5 Gbit/s (half the rate leaves the 2-core
# machine's CPUs more headroom) up to 16M, held to 15%: on a machine shared with other
# builds the measured side runs slow by up to 13% (docs/SIMULATOR.md), and a test that
# fails on load teaches nothing; a model error (a wrong bus factor, a lost round, a
# missing alpha) is 50% or more. The 10% target is checked by the full run.
if [ $LIGHT = 1 ]; then HOSTS=4; GBIT=0.5; MAXB=16M; [ -n "${TOL_GIVEN:-}" ] || TOL=15; fi

TMP=$(mktemp -d /tmp/weft_simval.XXXXXX)
[ -n "$OUT" ] || OUT=$TMP/out
mkdir -p "$OUT"
# shellcheck source=../netns/hosts_lib.sh
source "$(dirname "$0")/../netns/hosts_lib.sh"
cleanup() {
  hosts_down
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }

command -v ip >/dev/null || skip "iproute2 ('ip') is not installed"
command -v tc >/dev/null || skip "tc is not installed"
ip netns add "wrp$HOSTS_ID" 2>/dev/null || skip "cannot create a network namespace; run as root"
ip netns del "wrp$HOSTS_ID"
hosts_has_qdisc tbf || skip "no tbf qdisc in this kernel"

# The hosts (tests/netns/hosts_lib.sh): one rail each, behind a bridge, every host link
# shaped with tbf at GBIT both ways (the qdisc counts whole frames, so TCP's goodput is
# GBIT x 1448/1514; weft-sim is told the goodput). The tbf bucket holds 2 ms of the rate:
# tbf refills it from a timer, and on a loaded 2-core machine a timer that fires late
# with a small bucket loses capacity (16 KiB: 635 Mbit/s of iperf3 at 1 Gbit/s under
# load 9; 250 KB: 952); the price is that the first 2 ms worth of a message sent after
# an idle link goes at veth speed (mid sizes come out faster than the model). netem adds
# the delay where the kernel has it.
if [ "$DELAY_US" != 0 ] && ! hosts_has_qdisc netem; then
  echo "note: no netem qdisc in this kernel; --delay-us $DELAY_US ignored (delay = the veth's own)"
  DELAY_US=0
fi
MAXH=$(tr ',' '\n' <<<"$HOSTS" | sort -n | tail -1)
HOSTS_DELAY_US=$DELAY_US hosts_up "$MAXH" 1 "$GBIT" || die "cannot set up $MAXH namespaced hosts"
GOODPUT=$(awk -v g="$GBIT" 'BEGIN { printf "%.6g", g * 1448 / 1514 }')
echo "# $MAXH hosts max x $RPH rank(s), tbf ${GBIT} Gbit/s each way per host (TCP goodput $GOODPUT Gbit/s)," \
     "delay ${DELAY_US} us, load: $(cut -d' ' -f1-3 /proc/loadavg)"

TRANSPORT=tcp
[ "$RPH" -gt 1 ] && TRANSPORT=auto
run_bench() {  # nhosts op minb maxb iters warmup json
  local n=$1 op=$2 json=$7 r rc=0
  mkdir -p "$TMP/run"
  WEFT_SOCKET_IFNAME="=rail0" WEFT_TIMEOUT=120 HOSTS_RANK_TIMEOUT=240 \
    hosts_run "$n" "$RPH" "$TMP/run" env WEFT_TRANSPORT=$TRANSPORT \
    "$BENCH" --collective "$op" -b "$3" -e "$4" -f 2 -n "$5" -w "$6" -c 0 --json "$json" || rc=$?
  if [ $rc -ne 0 ]; then
    for r in $(seq 0 $((n * RPH - 1))); do echo "rank $r ($op, $n hosts):"; tail -5 "$TMP/run/out.$r"; done
  fi
  return $rc
}

bytes() {  # 1K / 64M / 4096 -> bytes (powers of 1024, as weft-bench)
  local v=${1%[KMGkmg]} u=${1: -1}
  case $u in K|k) echo $((v << 10)) ;; M|m) echo $((v << 20)) ;; G|g) echo $((v << 30)) ;; *) echo "$1" ;; esac
}
SMALL_MAX=512K LARGE_MIN=1M
[ "$(bytes "$MAXB")" -lt "$(bytes 1M)" ] && { SMALL_MAX=$MAXB; LARGE_MIN=""; }
[ "$(bytes "$MINB")" -gt "$(bytes 512K)" ] && { SMALL_MAX=""; LARGE_MIN=$MINB; }

STATUS=0
for n in ${HOSTS//,/ }; do
  files=()
  for op in ${OPS//,/ }; do
    t0=$(date +%s)
    for rep in $(seq 1 "$REPEAT"); do
      # Small sizes: many iterations (microseconds each); large: few (up to a second each).
      if [ -n "$SMALL_MAX" ]; then
        f="$OUT/bench_${op}_${n}h_small.$rep.json"
        run_bench "$n" "$op" "$MINB" "$SMALL_MAX" 20 5 "$f" || die "weft-bench $op"
        files+=("$f")
      fi
      if [ -n "$LARGE_MIN" ]; then
        f="$OUT/bench_${op}_${n}h_large.$rep.json"
        run_bench "$n" "$op" "$LARGE_MIN" "$MAXB" 4 1 "$f" || die "weft-bench $op"
        files+=("$f")
      fi
    done
    echo "# weft-bench $op on $n hosts: $(( $(date +%s) - t0 )) s"
  done
  # Drops in the shaping queues mean TCP retransmissions the model does not have.
  drops=$(hosts_drops "$n" 1)
  echo "# packets dropped by the shapers so far: $drops; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  list=$(IFS=,; echo "${files[*]}")
  timeout 120 "$SIM" validate --measured "$list" --instance custom --nodes "$n" \
    --accels-per-host "$RPH" "${WHAT_RAN[@]}" \
    --nic-gbit "$GOODPUT" --mem-gbps 10 --tolerance "$TOL" --check-from "$CHECK_FROM" \
    --json "$OUT/validate_${n}h.json" --plot "$OUT/validate_${n}h.svg" || STATUS=1
done
[ $STATUS = 0 ] || die "predictions off by more than ${TOL}% for sizes >= $CHECK_FROM"
echo "PASS"
