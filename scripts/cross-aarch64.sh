#!/usr/bin/env bash
# Cross-builds weft for aarch64 (Arm servers: Graviton, Grace) with Debian's
# g++-aarch64-linux-gnu and runs tests under qemu-user (docs/ARM.md). Emulation, not
# hardware: it checks that the code builds and gives the same answers on aarch64
# (NEON kernels, weak memory ordering as qemu's translation keeps it), not its speed.
#
#   scripts/cross-aarch64.sh          the CI subset (about 10 min on 2 cores)
#   scripts/cross-aarch64.sh --all    every unit test, and the multi-process subset
#
# Installs what is missing (arm64 packages through dpkg multiarch), registers qemu for
# aarch64 binaries with binfmt_misc when it can (the multi-process tests exec arm64
# programs from arm64 programs), and builds into build-aarch64 (WEFT_AARCH64_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=ci
case "${1:-}" in
  "") ;;
  --all) mode=all ;;
  *) echo "usage: $0 [--all]" >&2; exit 2 ;;
esac

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "cross-aarch64: adding the arm64 architecture to dpkg"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi
# Host tools, then the arm64 libraries weft links (fmt, libcrypto) and tests with (GTest).
# CLI11 and nlohmann-json are header-only and architecture-independent: the host's serve.
PKGS=(g++-aarch64-linux-gnu qemu-user-static libfmt-dev:arm64 libssl-dev:arm64
      libgtest-dev:arm64 libgmock-dev:arm64 libcli11-dev nlohmann-json3-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cross-aarch64: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# binfmt_misc: lets the kernel run an arm64 ELF through qemu, so that weftrun (arm64)
# can start arm64 ranks. Without it only the gtest binaries run (through qemu directly).
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
  [ -e "$binfmt/register" ] || $SUDO mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null || true
  if [ -w "$binfmt/register" ]; then
    $SUDO sh -c "cat /usr/lib/binfmt.d/qemu-aarch64.conf > $binfmt/register" 2>/dev/null || true
  fi
fi
have_binfmt=0
grep -qx enabled "$binfmt/qemu-aarch64" 2>/dev/null && have_binfmt=1

B=${WEFT_AARCH64_BUILD_DIR:-build-aarch64}
# No CUDA (no aarch64 CUDA toolkit here), no libfabric (its arm64 -dev package pulls in
# a second MPI stack; the ofi transport is x86-tested), no simulator or micro-benchmarks
# (host-side programs). Tools stay: weftrun starts the multi-process tests.
cmake -S . -B "$B" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
      -DWEFT_CUDA=OFF -DWEFT_OFI=OFF -DWEFT_BUILD_SIM=OFF -DWEFT_BUILD_BENCH=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      >/dev/null

UNITS=(weft_core_tests weft_net_tests weft_bootstrap_tests weft_sched_tests weft_exec_tests
       weft_transport_tests)
MP_TARGETS=(weft weftrun collectives_check registered_mixed registered_single_pass)
start=$(date +%s)
if [ "$mode" = all ]; then
  cmake --build "$B" -j"$(nproc)"
else
  cmake --build "$B" -j"$(nproc)" --target "${UNITS[@]}" "${MP_TARGETS[@]}"
fi
echo "cross-aarch64: built into $B in $(( $(date +%s) - start )) s"

# No -L: see cmake/toolchains/aarch64-linux-gnu.cmake.
qemu=(qemu-aarch64-static)
# Where qemu cannot run arm64 programs at all (no emulation allowed in this sandbox, say),
# the build above still proves that weft compiles for aarch64; the tests are skipped with
# the reason.
probe=$B/qemu-probe
printf 'int main(void) { return 0; }\n' | aarch64-linux-gnu-gcc -x c - -o "$probe"
if ! why=$("${qemu[@]}" "$probe" 2>&1); then
  echo "cross-aarch64: tests SKIPPED: qemu-aarch64-static cannot run an arm64 program here: $why"
  exit 0
fi
fail=0
run_unit() {  # binary [gtest filter]
  local bin=$B/tests/$1 filter=${2:-*} t0
  t0=$(date +%s)
  if "${qemu[@]}" "$bin" --gtest_filter="$filter" --gtest_brief=1 >"$B/$1.log" 2>&1; then
    echo "cross-aarch64: $1 [$filter] passed ($(( $(date +%s) - t0 )) s)"
  else
    echo "cross-aarch64: $1 [$filter] FAILED ($(( $(date +%s) - t0 )) s); its output:"
    tail -40 "$B/$1.log"
    fail=1
  fi
}

start=$(date +%s)
if [ "$mode" = all ]; then
  # Every unit test of every layer (ctest runs each through qemu, CROSSCOMPILING_EMULATOR).
  ctest --test-dir "$B" -L unit -j"$(nproc)" --timeout 900 --output-on-failure || fail=1
else
  # The CI subset (about 1.5 min under qemu), chosen for what aarch64 can change: the core
  # layer whole (futexes, deadlines); the NEON reduction kernels and float16/bfloat16
  # conversions against the scalar reference; the schedules in the interpreter; the shm
  # ring (its memory ordering, and its stress test), the shm link and the wire format;
  # the store. The generic kernels' loops are the same source natively tested on x86-64,
  # and the two NEON variants differ only in bfloat16 narrowing: so neon-bf16 whole, and
  # neon's bfloat16 kernels (every variant's whole matrix is in --all). The kernels' largest
  # test count is 65539 elements here (WEFT_TEST_LARGE_COUNT; 1000003 natively): still many
  # 4 KiB streaming blocks and every unrolled loop, at a fifteenth of the emulation time.
  run_unit weft_core_tests
  WEFT_TEST_LARGE_COUNT=65539 run_unit weft_exec_tests \
    '*_neon_bf16:*/bfloat16_*_neon:HalfNeon*:HalfTest.*:ReduceTest.*:Divide*:Streaming*'
  # Schedules are integer data, built the same on every architecture: the sweep at world
  # sizes 1..19 (1..64 in --all) and the other schedule suites, without the slowest
  # hierarchical sweeps (the two below: 3 of the 3.5 min the full set takes under qemu;
  # the pipelined ones' segment sweeps, the same builders again in segments).
  sched='All/AlgorithmSweep.*_size?:All/AlgorithmSweep.*_size1?'
  sched+=':AlgorithmMin.*:AlgorithmDeterminism.*:AlgorithmBarrier.*:Interpreter*:Registry*'
  sched+=':Hierarchical*:-HierarchicalReduceScatter.MatchesReferenceOnUniformTopologies'
  sched+=':HierarchicalBroadcast.MatchesReferenceForEveryRoot'
  sched+=':HierarchicalPipelined.MatchesReferenceForEverySegmentCount'
  sched+=':HierarchicalPipelined.AllGatherAndReduceScatterMatchReference'
  run_unit weft_sched_tests "$sched"
  run_unit weft_transport_tests '*Ring*:*Wire*:*Shm*'
  run_unit weft_bootstrap_tests '*Store*'
fi
echo "cross-aarch64: unit tests took $(( $(date +%s) - start )) s"

# Real processes over shm and tcp at 2 and 4 ranks, started by the arm64 weftrun: every
# collective at 2 ranks and allreduce (the reducing path) at 4, on both transports; and
# registered buffers at 4 ranks, mixed with plain ones and on the single-pass path, whose
# peers read and write each other's memory behind flags in the shared segment.
if [ "$have_binfmt" = 1 ]; then
  start=$(date +%s)
  mp='collectives_n2_(auto|tcp)|allreduce_floats_n4_(auto|tcp)|allreduce_ints_n4_auto'
  mp+='|registered_n4_even|registered_single_pass_n4'
  ctest --test-dir "$B" -j"$(nproc)" --output-on-failure -R "^mp_($mp)\$" || fail=1
  echo "cross-aarch64: multi-process tests took $(( $(date +%s) - start )) s"
else
  echo "cross-aarch64: multi-process tests SKIPPED: no binfmt_misc entry for aarch64 could" \
       "be registered (needs root and a writable $binfmt), so arm64 weftrun cannot exec ranks"
fi

[ "$fail" = 0 ] && echo "cross-aarch64: all passed" || { echo "cross-aarch64: FAILED"; exit 1; }
