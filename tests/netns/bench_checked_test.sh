#!/usr/bin/env bash
# weft-bench with its result check (-c 1) across network-namespace hosts (hosts_lib.sh),
# once per collective with the algorithm forced and once under the planner: the
# benchmark's buffers and sizes (up to several MiB, in and out of place) rather than
# collectives_check's, through the same code path the measurements in docs/BENCHMARKS.md
# take. weft-bench exits non-zero on any wrong element or weft error.
#
# Usage: bench_checked_test.sh --hosts H --ranks-per-host L --ops OP,... --force ALGO
#          [--expect-log REGEX] -- WEFT_BENCH [weft-bench args...]
#   --force ALGO     the forced run sets WEFT_ALGO=<op>:ALGO
#   --expect-log RE  rank 0's output of the forced runs must match RE (grep -E), with
#                    {op} replaced by the collective
# Needs CAP_SYS_ADMIN/CAP_NET_ADMIN for `ip netns`; otherwise prints SKIP and exits 77.
# The namespaces are deleted on exit, whatever happens.
set -u
H="" L=1 OPS="" FORCE="" EXPECT=""
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) H=$2; shift ;;  --ranks-per-host) L=$2; shift ;;  --ops) OPS=$2; shift ;;
    --force) FORCE=$2; shift ;;  --expect-log) EXPECT=$2; shift ;;
    --) shift; break ;;
    *) echo "bench_checked_test.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
BENCH=${1:-}
shift || true
[ -n "$H" ] && [ -n "$OPS" ] && [ -n "$FORCE" ] && [ -x "$BENCH" ] \
  || { echo "usage: $0 --hosts H --ranks-per-host L --ops OPS --force ALGO -- WEFT_BENCH ..." >&2; exit 2; }
source "$(dirname "$0")/hosts_lib.sh"
HOSTS_RANK_TIMEOUT=${HOSTS_RANK_TIMEOUT:-200}
TMP=$(mktemp -d /tmp/weft_benchcheck.XXXXXX)
trap 'hosts_down; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
die() { echo "FAIL: $*" >&2; exit 1; }

hosts_up "$H" 1 || { echo "SKIP: cannot create network namespaces (root or CAP_SYS_ADMIN needed)"; exit 77; }
for op in ${OPS//,/ }; do
  for variant in forced planner; do
    env=(WEFT_DEBUG=INFO)
    [ $variant = forced ] && env+=(WEFT_ALGO="$op:$FORCE")
    echo "== weft-bench --collective $op -c 1, $variant (${env[*]})"
    if ! hosts_run "$H" "$L" "$TMP" env "${env[@]}" "$BENCH" --collective "$op" -c 1 "$@"; then
      for f in "$TMP"/out.*; do echo "--- $f"; tail -15 "$f"; done
      die "weft-bench $op ($variant) failed"
    fi
    grep -E "planner: $op " "$TMP/out.0" | sed 's/^/  /'
    grep -E "^# (Out of bounds|Avg bus)" "$TMP/out.0" | sed 's/^/  /'
    if [ $variant = forced ] && [ -n "$EXPECT" ]; then
      re=${EXPECT//\{op\}/$op}
      grep -Eq "$re" "$TMP/out.0" || die "rank 0's output ($op, forced) does not match '$re'"
    fi
  done
done
echo "PASS"
