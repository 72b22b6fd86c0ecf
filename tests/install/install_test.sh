#!/usr/bin/env bash
# Installs the built weft into a temporary prefix and builds and runs a consumer project
# that finds it with find_package(weft).
set -euo pipefail
build_dir=$1; src_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src_dir/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib:${LD_LIBRARY_PATH:-}" "$tmp/consumer/consumer_c"
"$tmp/consumer/consumer_cpp"
# pkg-config finds the installed weft.pc and its flags build and run the C consumer.
pc=$(find "$tmp/prefix" -name weft.pc)
[ -n "$pc" ] || { echo "install: no weft.pc installed" >&2; exit 1; }
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs weft)
echo "pkg-config --cflags --libs weft: $flags"
cc "$src_dir/consumer/main.c" -o "$tmp/consumer_pc" $flags
LD_LIBRARY_PATH="$tmp/prefix/lib:${LD_LIBRARY_PATH:-}" "$tmp/consumer_pc"
