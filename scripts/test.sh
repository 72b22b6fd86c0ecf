#!/usr/bin/env bash
# Quick start, command 2: set up, build, and run the whole test suite (unit, multi-
# process over shm and tcp, two-host network-namespace tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
B=${WEFT_BUILD_DIR:-build}
start=$(date +%s)
ctest --test-dir "$B" --output-on-failure -j"$(nproc)" --timeout 900 "$@"
echo "test.sh: C++ suite finished in $(( $(date +%s) - start )) s"
# Clang's thread-safety analysis of every lock (scripts/thread-safety.sh; about 2 min).
bash scripts/thread-safety.sh
# aarch64: a cross build and the chosen tests under qemu-user (scripts/cross-aarch64.sh,
# docs/ARM.md; about 10 min on 2 cores).
if [ "${WEFT_SKIP_AARCH64:-0}" != 1 ]; then
  bash scripts/cross-aarch64.sh
fi
# ASan+UBSan and TSan builds running the unit, fuzz and failure-path multi-process tests
# (scripts/sanitize.sh; each build takes several minutes on 2 cores).
if [ "${WEFT_SKIP_SANITIZERS:-0}" != 1 ]; then
  bash scripts/sanitize.sh all
fi
# The torch.distributed backend (installs torch from PyPI on first use).
if [ "${WEFT_SKIP_PYTHON:-0}" != 1 ]; then
  bash tests/python/run.sh
fi
echo "test.sh: whole suite finished in $(( $(date +%s) - start )) s"
