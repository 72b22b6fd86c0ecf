#!/usr/bin/env bash
# Instruction-level evidence for the aarch64 reduction kernels: the guest instructions
# each kernel executes per element, counted by qemu-user (-d in_asm,exec,nochain logs
# every translated block and every execution of one), for the generic and NEON variants
# of a sum over 16384 elements. Counts, not timings: qemu's speed says nothing about an
# Arm core's. Needs the aarch64 build of bench/ (docs/ARM.md):
#   bash scripts/reduce-insns.sh [build dir, default build-aarch64-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-aarch64-bench}
bin=$B/bench/weft_reduce_once
if [ ! -x "$bin" ]; then
  echo "reduce-insns: $bin is missing; build it with:" >&2
  echo "  cmake -S . -B $B -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake" \
       "-DWEFT_CUDA=OFF -DWEFT_OFI=OFF -DWEFT_BUILD_SIM=OFF -DWEFT_BUILD_TESTS=OFF" \
       "-DWEFT_BUILD_TOOLS=OFF && cmake --build $B --target weft_reduce_once" >&2
  exit 2
fi
n=16384
log=$(mktemp)
trap 'rm -f "$log"' EXIT
count() {  # dtype isa -> guest instructions per element inside the kernel
  qemu-aarch64-static -d in_asm,exec,nochain -D "$log" "$bin" "$1" sum "$2" "$n" >/dev/null
  python3 - "$log" "$n" <<'PY'
import re, sys
log, n = sys.argv[1], int(sys.argv[2])
size, sym, cur = {}, {}, None   # block start pc -> instructions, symbol
name = ""
for line in open(log, errors="replace"):
    if line.startswith("IN:"):
        name, cur = line[3:].strip(), None
    elif line.startswith("0x") and ":" in line:
        pc = int(line.split(":", 1)[0], 16)
        if cur is None:
            cur, size[pc], sym[pc] = pc, 0, name
        size[cur] += 1
    elif not line.strip():
        cur = None
total = 0
for m in re.finditer(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/", open(log, errors="replace").read(), re.M):
    pc = int(m.group(1), 16)
    if "Kernels" in sym.get(pc, "") and "Reduce" in sym.get(pc, ""):
        total += size[pc]
print(f"{total / n:.2f}")
PY
}
echo "guest instructions per element, sum of $n elements, qemu-user $(qemu-aarch64-static --version | head -1 | awk '{print $3}')"
printf '| dtype | generic | neon | neon-bf16 |\n|---|---|---|---|\n'
for t in float32 float64 int32 int8 float16 bfloat16; do
  row="| $t"
  for isa in generic neon neon-bf16; do row+=" | $(count "$t" "$isa")"; done
  echo "$row |"
done
