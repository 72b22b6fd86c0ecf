#!/usr/bin/env bash
# README.md's simulator commands, exactly as written (weft-sim replaced by the built one),
# in a scratch folder (the train line writes bert.png): each must exit 0 and print its
# table, and the PNG must be written when this weft-sim has PNG support.
# Usage: readme_test.sh README WEFT_SIM
set -uo pipefail
readme=$1; sim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/out" ] && tail -20 "$tmp/out" >&2; exit 1; }

mapfile -t lines < <(grep -E '^    weft-sim ' "$readme" | sed 's/^    //')
[ ${#lines[@]} -ge 2 ] || fail "README.md shows ${#lines[@]} weft-sim commands, expected 2 or more"
for line in "${lines[@]}"; do
  read -ra argv <<<"${line#weft-sim }"
  (cd "$tmp" && timeout 90 "$sim" "${argv[@]}") >"$tmp/out" 2>&1 || fail "'$line' exited $?"
  grep -q "^# weft-sim ${argv[0]}" "$tmp/out" || fail "'$line' printed no weft-sim ${argv[0]} header"
  echo "ok: $line ($(grep -vc '^#' "$tmp/out") rows)"
done
# The train line's --plot bert.png: written, unless this weft-sim writes SVG only.
if grep -q -- "--plot bert.png" "$readme"; then
  if timeout 60 "$sim" scale --node-counts 1 -b 1K --repeat 1 --plot "$tmp/probe.png" >/dev/null 2>&1; then
    [ -s "$tmp/bert.png" ] || fail "no bert.png written"
    echo "ok: bert.png written"
  fi
fi
echo PASS
