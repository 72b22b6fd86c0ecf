#!/usr/bin/env bash
# The device check (docs/GPU.md). On a machine with one or more NVIDIA GPUs, in a few
# minutes:
#   1. the CUDA unit tests: the reduction kernel against its host reference (every dtype
#      and op, vectorised and not), the stream gate (both mechanisms), CUDA IPC export;
#   2. every collective on device buffers with 2 and 4 ranks sharing the GPU(s), on the
#      direct (CUDA IPC) and the staged (host memory) paths, and with the synchronous
#      fallback of the stream gate;
#   3. the reduction kernel's bandwidth against a device-to-device copy;
#   4. allreduce bandwidth tables on device buffers.
# Builds with CUDA into $WEFT_BUILD_DIR (default build-gpu) unless that already holds the
# binaries (the build needs the packages scripts/setup.sh installs). Exit status 0 when
# everything passed; each step is bounded by a timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${WEFT_BUILD_DIR:-build-gpu}
CHECK=$BUILD/tools/weft-gpu-check/weft-gpu-check
RUN=$BUILD/tools/weftrun/weftrun
UNIT=$BUILD/tests/weft_gpu_tests

if [[ ! -x $CHECK || ! -x $RUN || ! -x $UNIT ]]; then
  echo "== building weft with CUDA into $BUILD"
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DWEFT_CUDA=ON || exit 1
  cmake --build "$BUILD" -j"$(nproc)" --target weft-gpu-check weftrun weft_gpu_tests || exit 1
fi

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv 2>/dev/null ||
  echo "(nvidia-smi not available)"

if skip=$("$CHECK" kernels 2>&1 | grep '^SKIP'); then
  echo "gpu-check: SKIPPED: $skip"
  exit 0
fi

status=0
step() {
  echo
  echo "== $*"
  local t0=$SECONDS
  timeout "${WEFT_GPU_CHECK_STEP_TIMEOUT:-300}" "$@"
  local rc=$?
  echo "-- rc=$rc in $((SECONDS - t0)) s"
  [[ $rc -eq 0 ]] || status=1
}

step "$UNIT" --gtest_brief=1
for n in 2 4; do
  for path in direct staged; do
    step "$RUN" -n "$n" --timeout 240 -x WEFT_CUDA_PATH=$path -x WEFT_TIMEOUT=60 \
      "$CHECK" correctness
  done
done
# The fallback for drivers without stream memory operations: synchronous stream calls.
step "$RUN" -n 2 --timeout 240 -x WEFT_CUDA_STREAM_WAIT=sync -x WEFT_TIMEOUT=60 \
  "$CHECK" correctness quick
step "$CHECK" kernels
for n in 2 4; do
  step "$RUN" -n "$n" --timeout 240 -x WEFT_CUDA_PATH=direct "$CHECK" bandwidth
done
step "$RUN" -n 2 --timeout 240 -x WEFT_CUDA_PATH=staged "$CHECK" bandwidth 33554432
echo
if [[ $status -eq 0 ]]; then echo "gpu-check: PASS"; else echo "gpu-check: FAIL"; fi
exit $status
