#!/usr/bin/env bash
# weft-bench with nccl-tests' flags: the issue's command line as one process (no
# launcher: a world of one) and under weftrun; nccl-tests' program names pick the
# collective; values weft-bench does not implement are usage errors (exit 2) that say
# why; --version on every tool; every tool's usage errors exit 2.
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

# 2. The same line under weftrun, 2 ranks, in the README's form: weftrun starting the
# all_reduce_perf link (one run checks both).
ln -s "$BENCH" "$TMP/all_reduce_perf"
timeout 280 "$WEFTRUN" -n 2 --timeout 240 -- "$TMP/all_reduce_perf" "${NCCL_ARGS[@]}" >"$TMP/out" 2>&1 \
  || fail "weftrun -n 2 all_reduce_perf exited $?"
grep -q "# Collective: allreduce" "$TMP/out" || fail "all_reduce_perf did not run allreduce"
grep -Eq "134217728 +33554432 +float32 +sum +-1 " "$TMP/out" || fail "no 128M row under weftrun"
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

# 6. Exit codes: 0 on --help, 2 on a usage error, on every tool; weft-sim refuses the
# spellings that mean something else in nccl-tests, and reports each bad value alone,
# a size past 2^64 - 1 included.
for tool in "$WEFTRUN" "$BENCH" "$DOCTOR" $SIM; do
  "$tool" --help >"$TMP/out" 2>&1 || fail "$tool --help exited $?"
done
echo "ok: --help exits 0 on every tool"
tool_usage_error() {  # EXPECTED_TEXT TOOL ARGS...
  local want=$1; shift
  timeout 60 "$@" >"$TMP/out" 2>&1; local rc=$?
  [ $rc -eq 2 ] || fail "$* exited $rc, expected 2 (usage error)"
  grep -q -- "$want" "$TMP/out" || fail "$*: message lacks '$want'"
  echo "ok: $(basename "$1") ${*:2} -> 2: $(grep -m1 -- "$want" "$TMP/out")"
}
# (weftrun passes an unknown word on to the program, as mpirun does: a bad value instead.)
tool_usage_error "-n" "$WEFTRUN" -n abc true
tool_usage_error "Run with --help" "$WEFTRUN" -n abc true
tool_usage_error "--no-such-flag" "$BENCH" --no-such-flag
tool_usage_error "'17179869185G' is not a size" "$BENCH" -e 17179869185G
tool_usage_error "--no-such-flag" "$DOCTOR" --no-such-flag "$TMP"
tool_usage_error "Run with --help" "$DOCTOR" --no-such-flag "$TMP"
tool_usage_error "dir is required" "$DOCTOR"
if [ -n "$SIM" ]; then
  tool_usage_error "--no-such-flag" "$SIM" collective --no-such-flag
  tool_usage_error "Run with --help" "$SIM" collective --no-such-flag
  tool_usage_error "subcommand" "$SIM"
  tool_usage_error "-e/--maxbytes '17179869185G' is not a size" \
    "$SIM" collective --instance p4d.24xlarge --nodes 2 -b 1K -e 17179869185G
  tool_usage_error "-b/--minbytes 2G is larger than -e/--maxbytes 1G" \
    "$SIM" collective --nodes 2 -b 2G -e 1G
  tool_usage_error "--collective 'bogus' is not one of: allreduce" "$SIM" collective --collective bogus
  tool_usage_error "-d/--datatype 'bogus' is not one of: int8" "$SIM" collective -d bogus
  # Two bad values: both reported.
  "$SIM" collective --collective bogus -b 1X >"$TMP/out" 2>&1
  grep -q -- "--collective 'bogus'" "$TMP/out" && grep -q -- "-b/--minbytes '1X'" "$TMP/out" \
    || fail "weft-sim did not report both bad values"
  tool_usage_error "name the collective with --collective" "$SIM" collective --op allreduce
  tool_usage_error "name the collective with --collective" "$SIM" scale -o allreduce
  tool_usage_error "weft-sim takes the node count as -N/--nodes" "$SIM" collective -n 4
  tool_usage_error "weft-sim takes the node count as -N/--nodes" "$SIM" train -n 1,2
  tool_usage_error "--collective 'bogus'" "$SIM" scale --collective bogus --node-counts 2
  "$SIM" collective -N 2 --collective allgather -b 1M -e 1M >"$TMP/out" 2>&1 \
    || fail "weft-sim collective -N 2 --collective allgather exited $?"
  grep -q "x 2 nodes" "$TMP/out" && grep -q "^# Collective: allgather" "$TMP/out" \
    || fail "-N 2 --collective allgather did not simulate 2 nodes of allgather"
  echo "ok: weft-sim collective -N 2 --collective allgather"
fi
echo PASS
