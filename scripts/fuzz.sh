#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz, docs/FUZZING.md) for a bounded time with
# ASan and UBSan, merges the inputs that reach new code into tests/fuzz/corpus/<target>/,
# and prints the executions per target.
#
#   scripts/fuzz.sh [TARGET...]          (default: every target)
#   FUZZ_SECONDS=60   seconds per target
#   FUZZ_MERGE=1      0: leave the checked-in corpus alone
#   FUZZ_JOBS=2       build parallelism
#   FUZZ_BUILD_DIR=build-fuzz
# Needs clang with libFuzzer (Debian: clang). Exit status 1 when any target crashed;
# the reproducer is $FUZZ_BUILD_DIR/artifacts/<target>-crash-*.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=${FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
MERGE=${FUZZ_MERGE:-1}
JOBS=${FUZZ_JOBS:-2}
CORPUS=tests/fuzz/corpus

ALL=()
for f in tests/fuzz/*_fuzz.cc; do
  n=$(basename "$f" _fuzz.cc)
  ALL+=("$n")
done
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")

# Every weft layer gets the sanitizers and libFuzzer's coverage hooks; only the fuzz
# targets link libFuzzer's main. UBSan aborts on its first report so libFuzzer keeps
# the input. The unit tests, tools and benchmarks are not needed here.
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$SAN -fno-omit-frame-pointer" \
  -DWEFT_FUZZ=ON -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_TOOLS=OFF -DWEFT_BUILD_BENCH=OFF \
  -DCMAKE_PROJECT_INCLUDE="$ROOT/tests/fuzz/fuzz_hook.cmake" >/dev/null || exit 2
cmake --build "$B" -j"$JOBS" --target "${TARGETS[@]/#/weft_fuzz_}" || exit 2

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$B/artifacts" "$B/logs"
declare -A EXECS RATE RESULT
failed=0
for t in "${TARGETS[@]}"; do
  bin="$B/weft_fuzz_$t"
  [ -x "$bin" ] || bin="$B/tests/fuzz/weft_fuzz_$t"
  new="$B/corpus-new/$t"
  mkdir -p "$new" "$CORPUS/$t"
  log="$B/logs/$t.log"
  echo "== $t: ${SECONDS_EACH}s"
  # New inputs go to $new (the first directory); the checked-in seeds are read only.
  "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$B/artifacts/$t-" "$new" "$CORPUS/$t" >"$log" 2>&1
  rc=$?
  EXECS[$t]=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  RATE[$t]=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ $rc -ne 0 ]; then
    RESULT[$t]="CRASH (see $log)"
    failed=1
    grep -E "ERROR|runtime error|fuzz property failed|Test unit written" "$log" | head -5
    continue
  fi
  RESULT[$t]=ok
  if [ "$MERGE" = 1 ]; then
    # Keeps only the inputs that add coverage beyond what the corpus already reaches.
    before=$(ls "$CORPUS/$t" | wc -l)
    "$bin" -merge=1 -max_len=4096 "$CORPUS/$t" "$new" >"$B/logs/$t.merge.log" 2>&1
    after=$(ls "$CORPUS/$t" | wc -l)
    RESULT[$t]="ok, corpus $before -> $after files"
  fi
done

echo
printf '%-16s %14s %12s  %s\n' target execs execs/s result
for t in "${TARGETS[@]}"; do
  printf '%-16s %14s %12s  %s\n' "$t" "${EXECS[$t]:-?}" "${RATE[$t]:-?}" "${RESULT[$t]}"
done
exit $failed
