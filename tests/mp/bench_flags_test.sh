#!/usr/bin/env bash
# weft-bench with nccl-tests' flags: the issue's command line as one process (no
# launcher: a world of one) and under weftrun; nccl-tests' program names pick the
# collective; values weft-bench does not implement are usage errors (exit 2) that say
# why; --version on every tool.
# Usage: bench_flags_test.sh WEFTRUN WEFT_BENCH WEFT_DOCTOR [WEFT_SIM]
set -u
WEFTRUN=$1; BENCH=$2; DOCTOR=$3; SIM=${4:-}
TMP=$(mktemp -d /tmp/bench_flags.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$TMP/out" ] && { echo "--- output ---" >&2; tail -30 "$TMP/out" >&2; }; exit 1; }
NCCL_ARGS=(-b 8 -e 128M -f 2 -g 1 -o sum -r 0 -c 1)

# 1. One process, no launcher variables at all.
env -u WEFT_RANK -u RANK -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u PMI_RANK -u PMIX_RANK \
  timeout 240 "$BENCH" "${NCCL_ARGS[@]}" >"$TMP/out" 2>&1 || fail "one-process run exited $?"
grep -q "world size 1" "$TMP/out" || fail "no note that it runs as one process"
grep -q "^# Collective: allreduce" "$TMP/out" || fail "default collective is not allreduce"
grep -Eq "^ +134217728 +33554432 +float32 +sum +-1 " "$TMP/out" || fail "no 128M float32 sum row"
grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "results not checked OK"
echo "ok: one process: ${NCCL_ARGS[*]}"

# 2. The same line under weftrun, 2 ranks.
timeout 280 "$WEFTRUN" -n 2 --timeout 240 -- "$BENCH" "${NCCL_ARGS[@]}" >"$TMP/out" 2>&1 \
  || fail "weftrun -n 2 run exited $?"
grep -Eq "^\[0\] +134217728 +33554432 +float32 +sum +-1 |^ +134217728 +33554432 +float32 +sum +-1 " "$TMP/out" \
  || grep -Eq "134217728 +33554432 +float32 +sum +-1 " "$TMP/out" || fail "no 128M row under weftrun"
grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "weftrun run not checked OK"
echo "ok: weftrun -n 2: ${NCCL_ARGS[*]}"
# The README's form: weftrun starting the all_reduce_perf link.
ln -s "$BENCH" "$TMP/all_reduce_perf"
timeout 280 "$WEFTRUN" -n 2 --timeout 240 -- "$TMP/all_reduce_perf" "${NCCL_ARGS[@]}" >"$TMP/out" 2>&1 \
  || fail "weftrun -n 2 all_reduce_perf exited $?"
grep -q "# Collective: allreduce" "$TMP/out" || fail "all_reduce_perf did not run allreduce"
grep -q "Out of bounds values : 0 OK" "$TMP/out" || fail "all_reduce_perf run not checked OK"
echo "ok: weftrun -n 2 all_reduce_perf: ${NCCL_ARGS[*]}"

# 3. nccl-tests' program names choose the collective; -o is the reduction.
ln -s "$BENCH" "$TMP/reduce_scatter_perf"
"$TMP/reduce_scatter_perf" -b 64 -e 64 -o max -n 1 -w 0 >"$TMP/out" 2>&1 || fail "reduce_scatter_perf exited $?"
grep -q "^# Collective: reducescatter" "$TMP/out" || fail "reduce_scatter_perf did not run reducescatter"
grep -Eq " float32 +max " "$TMP/out" || fail "-o max is not the reduction"
"$BENCH" --collective broadcast -b 64 -e 64 -n 1 -w 0 >"$TMP/out" 2>&1 || fail "--collective broadcast exited $?"
grep -q "^# Collective: broadcast" "$TMP/out" || fail "--collective broadcast ran something else"
# -i steps linearly when -f is not given (nccl-tests).
"$BENCH" -b 1K -e 4K -i 1K -n 1 -w 0 >"$TMP/out" 2>&1 || fail "-i run exited $?"
[ "$(grep -Ec "^ +(1024|2048|3072|4096) " "$TMP/out")" = 4 ] || fail "-i 1K did not give 1K, 2K, 3K, 4K"
for a in 0 1 2 3; do
  "$BENCH" -b 64 -e 64 -n 2 -w 0 -m 3 -a $a -z 1 -t 1 -p 0 >"$TMP/out" 2>&1 || fail "-a $a -m 3 exited $?"
done
echo "ok: program names, --collective, -o, -i, -a, -m, -z"

# 4. Unsupported or wrong values: exit 2 and a message that says what to do.
usage_error() {  # EXPECTED_TEXT ARGS...
  local want=$1; shift
  "$BENCH" "$@" >"$TMP/out" 2>&1; local rc=$?
  [ $rc -eq 2 ] || fail "weft-bench $* exited $rc, expected 2 (usage error)"
  grep -q -- "$want" "$TMP/out" || fail "weft-bench $*: message lacks '$want'"
  echo "ok: weft-bench $* -> $(head -1 "$TMP/out")"
}
usage_error "-g 2: weft-bench drives one device per process" -g 2
usage_error "-t 4: one thread per process" -t 4
usage_error "-p 1: only 0" -p 1
usage_error "-z 2: expected 0 or 1" -z 2
usage_error "choose the collective with --collective allreduce" -o allreduce
usage_error "unknown reduction 'bogus'" -o bogus
usage_error "unknown collective 'bogus'" --collective bogus

# 5. --version on every tool.
for tool in "$WEFTRUN" "$BENCH" "$DOCTOR" $SIM; do
  v=$("$tool" --version 2>&1) || fail "$tool --version exited $?"
  echo "$v" | grep -Eq "\(weft [0-9]+\.[0-9]+\.[0-9]+\)|weft [0-9]+\.[0-9]+\.[0-9]+" \
    || fail "$tool --version printed '$v'"
  echo "ok: $v"
done
echo PASS
