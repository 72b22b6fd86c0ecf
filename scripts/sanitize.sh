#!/usr/bin/env bash
# Builds weft under the sanitizers and runs a subset of the suite there.
# Usage: scripts/sanitize.sh [asan|tsan|all]
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/): the unit tests of
#         every layer but the simulator (thread ranks through the public API included), the
#         fuzz corpus replays (50,000 mutations per target from seed 2, where the plain
#         build runs 200,000 from seed 1: 25 s instead of 67 s one after the other on
#         2026-12-07), and the multi-process tests that kill, cut, shrink, attack and soak.
#   tsan: ThreadSanitizer (build-tsan/): the layers with threads (bootstrap store server,
#         executor and p2p engine, transports, the public API with thread ranks; not the
#         single-threaded reduction kernels) and the multi-process subset.
# Called by scripts/test.sh unless WEFT_SKIP_SANITIZERS=1. Any report fails the run
# (-fno-sanitize-recover=all, halt_on_error). Only the targets a subset needs are built,
# to keep each build to minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}

# Real processes over shm and tcp, non-blocking calls and split communicators, and the
# failure paths: kills, dead peers, timeouts, aborts, shrink, hostile connections. The
# full collective matrix stays in the plain build.
MP_SUBSET='^mp_(collectives_n2_auto|p2p_barrier_split_n3_auto|p2p_barrier_split_n4_tcp|init_.*|kill_random_rank_.*|slow_reader_tcp|doctor_straggler|soak_n4|auth_attack|shrink_kill1_n4_.*|shrink_exclude_n4_tcp|weftrun_.*)$'
MP_TARGETS=(weftrun weft-doctor collectives_check init_only wait_for_peer auth_attack kill_loop
            straggler soak shrink_check)

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# Runs ctest on DIR with the given selection. Prints the summary; on a failure also the
# failed tests' own output (a sanitizer report), which the summary alone would cut off.
run_ctest() {  # DIR CTEST_ARGS...
  local dir=$1 log rc=0
  shift
  log=$(mktemp)
  ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" --timeout 900 "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "sanitize: ctest failed (exit $rc); the failed tests' output:"
    awk '/\*\*\*(Failed|Exception|Timeout)|\(Failed\)|\(Subprocess aborted\)/ {n = 200} n-- > 0' \
        "$log" | head -n 1500
    echo "sanitize: ... summary:"
  fi
  tail -n 60 "$log"
  rm -f "$log"
  return "$rc"
}

run() {  # NAME SANITIZERS SKIP_REGEX UNIT_LAYERS...
  local name=$1 sanitizers=$2 skip=$3 dir=build-$1 start targets=() fuzz=()
  shift 3
  start=$(date +%s)
  echo "sanitize: configuring $dir (-fsanitize=$sanitizers)"
  # -O1 -g1 (line tables, no variable info): reports keep file:line stacks, and each
  # instrumented test file compiles in about 40% of the time -O2 -g takes (100 -> 40 s
  # for exec/reduce_test.cc under ASan+UBSan on 2 cores), which is most of CI's time.
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_CUDA=OFF -DWEFT_OFI=OFF \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
        -DWEFT_BUILD_BENCH=OFF -DWEFT_SANITIZE="$sanitizers" -DWEFT_KILL_TEST_TRIALS=2 \
        -DWEFT_FUZZ_MUTATIONS=50000 -DWEFT_FUZZ_SEED=2 \
        "${launcher[@]}" >/dev/null
  for layer in "$@"; do targets+=("weft_${layer}_tests"); done
  if [ "$name" = asan ]; then
    mapfile -t fuzz < <(cmake --build "$dir" --target help | awk '/weft_fuzz_/ {print $2}')
  fi
  echo "sanitize: building ${#targets[@]} unit binaries, ${#fuzz[@]} fuzz replays, ${#MP_TARGETS[@]} programs"
  cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}" "${fuzz[@]}" "${MP_TARGETS[@]}" >/dev/null
  echo "sanitize: $dir built in $(( $(date +%s) - start )) s"
  # Only the built binaries have registered their tests; the rest of the tree is not run.
  local labels=unit
  [ ${#fuzz[@]} -gt 0 ] && labels="unit|fuzz"
  # The schedules' interpreter sweep runs every algorithm at world sizes 1-16, 32, 33 and
  # 64 here (the single-pass ones at 1-16), 1-64 in the plain build: the other worlds
  # repeat the same builder code, and under ASan sizes 17-64 took 384 s of 434. The
  # planner's golden table stays in the plain build too: it weighs every algorithm for
  # 6,000 calls (112 s under ASan, 11 s plain), the estimates the other planner tests run.
  local sweep='AlgorithmSweep\.MatchesReference/.*_size(1[7-9]|2[0-9]|3[014-9]|[45][0-9]|6[0-3])( |$)'
  run_ctest "$dir" -L "$labels" \
      -E "^(Gpu|Sim)|$sweep|single_pass_size([2-9][0-9]|1[7-9])|^PlannerChoiceTable\.MatchesGolden\$$skip"
  run_ctest "$dir" -R "$MP_SUBSET"
  echo "sanitize: $name passed in $(( $(date +%s) - start )) s"
}

# halt_on_error: the first report ends the process, so the test fails with the report in
# its output. LeakSanitizer stays on: a leak at exit fails the test too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

ASAN_LAYERS=(core net bootstrap sched exec transport gpu fake api doctor)
TSAN_LAYERS=(bootstrap exec transport api fake)
# TSan skips the exec layer's single-threaded kernel sweeps (reduce_test.cc, half_test.cc:
# every dtype, op and CPU variant, half of its unit tests and most of its time), which
# have no threads to race; the plain and ASan builds run them.
TSAN_SKIP='|^AllTypes(AllOps)?/(ReduceAllTest|DivideTest)\.|^(ReduceTest|HalfTest|StreamingCopyTest)\.'
# The shm ring's stress test sends 100,000 messages under TSan instead of 400,000 (46 s
# of the TSan unit run, 2026-12-07): TSan reports the first unordered pair of accesses it
# sees, and 100,000 messages of random sizes still wrap the 4 KiB ring tens of thousands
# of times. The plain and ASan builds keep 400,000.
run_tsan() {
  WEFT_RING_STRESS_ITERS=${WEFT_RING_STRESS_ITERS:-100000} \
    run tsan thread "$TSAN_SKIP" "${TSAN_LAYERS[@]}"
}

case $which in
  asan) run asan address,undefined "" "${ASAN_LAYERS[@]}" ;;
  tsan) run_tsan ;;
  all) run asan address,undefined "" "${ASAN_LAYERS[@]}"; run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;;
esac
