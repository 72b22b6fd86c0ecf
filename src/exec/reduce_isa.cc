// Which of the reduction kernels' instruction sets (reduce_internal.h) this CPU runs,
// asked of the CPU or the kernel once per process: GetReduceFn runs on every reducing
// step, and on x86 cpuid is a serialising instruction that traps to the hypervisor in a
// VM (microseconds each).
#include <array>

#include "exec/reduce_internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace weft::exec::internal {
namespace {

// Linux's aarch64 hwcap bits (arch/arm64/include/uapi/asm/hwcap.h), for a libc whose
// headers predate them.
#if defined(__aarch64__)
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif
#endif

bool Ask(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kGeneric: return true;
    case ReduceIsa::kX86V3: {
#if defined(__x86_64__)
      // avx2 also checks that the OS saves the AVX registers. F16C through cpuid (leaf 1,
      // ECX bit 29): clang before 16 rejects __builtin_cpu_supports("f16c").
      unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
      const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
#else
      return false;
#endif
    }
    case ReduceIsa::kArmNeon:
    case ReduceIsa::kArmNeonBf16: {
#if defined(__aarch64__)
      // The kernel reports what the CPU has (and lets user space use) in the auxiliary
      // vector; HWCAP2 holds the Armv8.2+ extensions.
      const bool asimd = (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0;
      if (isa == ReduceIsa::kArmNeon) return asimd;
      return asimd && (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
#else
      return false;
#endif
    }
  }
  return false;
}

}  // namespace

bool CpuRuns(ReduceIsa isa) {
  static const auto runs = [] {
    std::array<bool, std::size(kAllReduceIsas)> r{};
    for (size_t i = 0; i < r.size(); ++i) r[i] = Ask(kAllReduceIsas[i]);
    return r;
  }();
  const auto i = static_cast<size_t>(isa);
  return i < runs.size() && runs[i];
}

// The widest variant this CPU runs; later entries of kAllReduceIsas are preferred.
ReduceIsa SelectedReduceIsa() {
  static const ReduceIsa best = [] {
    ReduceIsa b = ReduceIsa::kGeneric;
    for (ReduceIsa isa : kAllReduceIsas)
      if (CpuRuns(isa)) b = isa;
    return b;
  }();
  return best;
}

const char* ReduceIsaName(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kGeneric: return "generic";
    case ReduceIsa::kX86V3: return "x86-64-v3";
    case ReduceIsa::kArmNeon: return "neon";
    case ReduceIsa::kArmNeonBf16: return "neon-bf16";
  }
  return "unknown";
}

}  // namespace weft::exec::internal
