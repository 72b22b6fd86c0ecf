#!/usr/bin/env bash
# The library alone configures without nlohmann-json and CLI11 (CMake told they are not
# there): only fmt and libcrypto are its dependencies. Configured, not built. The same
# configuration with the simulator on must fail, which shows the packages really are
# kept out.
# Usage: library_only_configure_test.sh SOURCE_DIR
set -uo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; tail -20 "$tmp/log" >&2; exit 1; }
common=(-DWEFT_BUILD_TOOLS=OFF -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_TESTS=OFF -DWEFT_CUDA=OFF
        -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON)

timeout 240 cmake -S "$src" -B "$tmp/lib" -DWEFT_BUILD_SIM=OFF "${common[@]}" >"$tmp/log" 2>&1 \
  || fail "library-only configure failed"
echo "ok: library-only configure without nlohmann-json and CLI11"

if timeout 240 cmake -S "$src" -B "$tmp/sim" -DWEFT_BUILD_SIM=ON "${common[@]}" >"$tmp/log" 2>&1; then
  fail "WEFT_BUILD_SIM=ON configured without nlohmann-json: the package was not kept out"
fi
grep -q "nlohmann_json" "$tmp/log" || fail "the failure with WEFT_BUILD_SIM=ON is not about nlohmann_json"
echo "ok: WEFT_BUILD_SIM=ON without nlohmann-json fails as it should"
echo PASS
