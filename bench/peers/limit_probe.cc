// The hardware limits the peer comparison is read against: what one core moves at
// 16 MiB (past the caches) with memcpy, and with `a += b` on float32 — the inner loop of
// every sum reduction. A collective on one host can beat neither per core: a ring
// allreduce step is a copy or a reduction of a chunk.
//
//   limit_probe [--json FILE]
//
// Rates are bytes of one buffer per second (as bench/reduce_bench.cc reports them):
// memcpy moves 2 bytes per byte (read + write), `a += b` 3 (two reads + a write).
// Plain timing, median of 15 runs of 4 passes, after a warm-up; no Google Benchmark
// needed, so it builds wherever weft builds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

constexpr size_t kBytes = 16u << 20;

// GB/s (1e9) of one buffer, median over repeats.
double Rate(const std::function<void()>& pass) {
  constexpr int kPasses = 4, kRepeats = 15;
  for (int i = 0; i < kPasses; ++i) pass();
  std::vector<double> rates;
  for (int r = 0; r < kRepeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kPasses; ++i) pass();
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    rates.push_back(static_cast<double>(kBytes) * kPasses / s / 1e9);
  }
  std::nth_element(rates.begin(), rates.begin() + kRepeats / 2, rates.end());
  return rates[kRepeats / 2];
}

// Out of line so the compiler cannot fold passes together; the loop vectorises at -O2.
__attribute__((noinline)) void AddInto(float* __restrict a, const float* __restrict b,
                                       size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] += b[i];
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  if (argc == 3 && std::string(argv[1]) == "--json") json_path = argv[2];
  else if (argc != 1) {
    std::fprintf(stderr, "usage: limit_probe [--json FILE]\n");
    return 2;
  }
  const size_t n = kBytes / sizeof(float);
  // Values whose repeated sums stay finite and normal (no inf, no denormals).
  std::vector<float> a(n, 1.0f), b(n, 1e-3f);
  std::vector<char> src(kBytes, 1), dst(kBytes, 2);

  const double memcpy_gbps = Rate([&] {
    std::memcpy(dst.data(), src.data(), kBytes);
    asm volatile("" : : "r"(dst.data()) : "memory");
  });
  const double add_gbps = Rate([&] {
    AddInto(a.data(), b.data(), n);
    asm volatile("" : : "r"(a.data()) : "memory");
  });
  std::printf("one core, 16 MiB: memcpy %.2f GB/s, float32 a += b %.2f GB/s\n", memcpy_gbps,
              add_gbps);
  if (!json_path.empty()) {
    nlohmann::json j = {{"bytes", kBytes}, {"memcpy_gbps", memcpy_gbps},
                        {"add_float32_gbps", add_gbps}};
    std::ofstream out(json_path);
    out << j.dump(2) << "\n";
    if (!out) return 1;
  }
  return 0;
}
