#!/usr/bin/env bash
# weft-sim installed into a temporary prefix reads the catalogs installed beside it
# (<prefix>/share/weft/sim), not the source tree's: the source tree's sim/catalog and
# sim/calibration are hidden under empty tmpfs mounts in a private mount namespace
# (unshare -m; root), and the installed weft-sim must still print its tables. The build
# tree's weft-sim, which has only the source tree to read, must then fail and name the
# folders it looked in, which shows the hiding works. Exit 77 (skipped) where a mount
# namespace cannot be made.
# Usage: sim_data_test.sh BUILD_DIR SOURCE_DIR BUILD_TREE_WEFT_SIM
set -uo pipefail
build_dir=$1; src=$2; build_sim=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/out" ] && tail -20 "$tmp/out" >&2; exit 1; }

if ! timeout 10 unshare -m sh -c "mount -t tmpfs none '$src/sim/catalog'" 2>"$tmp/out"; then
  echo "sim_data_test: skipped: cannot hide the source catalog ($(cat "$tmp/out"))"
  exit 77
fi
timeout 120 cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null || fail "cmake --install"
sim="$tmp/prefix/bin/weft-sim"
[ -x "$sim" ] || fail "no weft-sim installed in $tmp/prefix/bin"
for f in catalog/instances.json catalog/models.json calibration/published.csv \
         calibration/nccl_figures.json; do
  [ -f "$tmp/prefix/share/weft/sim/$f" ] || fail "not installed: share/weft/sim/$f"
done

# Runs "$@" with the source tree's data folders empty.
hidden() {
  timeout 300 unshare -m sh -c 'src=$1; shift
    mount -t tmpfs none "$src/sim/catalog" && mount -t tmpfs none "$src/sim/calibration" &&
    [ -z "$(ls -A "$src/sim/catalog")" ] && exec "$@"' sh "$src" "$@"
}

hidden "$sim" collective --instance p4d.24xlarge --nodes 2 --collective allreduce -b 1K -e 1M \
  -f 32 >"$tmp/out" 2>&1 || fail "installed weft-sim collective exited $?"
grep -q "^# weft-sim collective: p4d.24xlarge x 2 nodes = 16 ranks" "$tmp/out" || fail "no header"
[ "$(grep -Ec "^ +(1024|32768|1048576) " "$tmp/out")" = 3 ] || fail "not the 3 rows 1K, 32K, 1M"
echo "ok: installed weft-sim collective, source catalog hidden"

hidden "$sim" train --model bert-large --instance trn1.32xlarge --nodes 1,2 >"$tmp/out" 2>&1 \
  || fail "installed weft-sim train exited $?"
grep -q "bert-large" "$tmp/out" || fail "train printed no bert-large table"
[ "$(grep -Ec "^ +[12] " "$tmp/out")" -ge 2 ] || fail "train printed no row per node count"
echo "ok: installed weft-sim train (models.json), source catalog hidden"

hidden "$sim" collective --model nccl --instance p5.48xlarge --nodes 2 -b 1M -e 1M \
  >"$tmp/out" 2>&1 || fail "installed weft-sim collective --model nccl exited $?"
grep -q "nccl:" "$tmp/out" || fail "no NCCL-model row (calibration/nccl_figures.json)"
echo "ok: installed weft-sim --model nccl (calibration), source calibration hidden"

# The control: the build tree's weft-sim has nothing left to read.
hidden "$build_sim" collective --instance p4d.24xlarge --nodes 2 -b 1K -e 1K >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "build-tree weft-sim with the source catalog hidden exited $rc, expected 2"
grep -q "catalog/instances.json is in none of: .*share/weft/sim, $src/sim" "$tmp/out" \
  || fail "the error does not name the file and both folders"
echo "ok: build-tree weft-sim, source catalog hidden: $(head -1 "$tmp/out")"
echo PASS
