// Throughput of the CPU reduction kernels against memcpy, at a size well past the
// caches (16 MiB per buffer), so that both are bound by memory bandwidth. A reduction
// reads two buffers and writes one (3 bytes of traffic per buffer byte) against
// memcpy's 2, so "as fast as memory allows" is about 2/3 of memcpy's rate.
//
// Rates are reported as bytes of one buffer per second (bytes_per_second), the unit
// that matters to a collective: how fast a rank can fold an incoming chunk in.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/half.h"
#include "core/types.h"
#include "exec/reduce.h"
#include "exec/reduce_internal.h"

namespace {

constexpr size_t kBytes = 16u << 20;

void BM_Memcpy(benchmark::State& state) {
  std::vector<uint8_t> src(kBytes, 1), dst(kBytes, 2);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One benchmark body for every dtype: the kernel comes from the same table the
// executor uses. Values are small so that repeated sums stay finite (no inf/NaN,
// which could change the speed of some FPUs).
void BM_Reduce(benchmark::State& state) {
  const auto dtype = static_cast<weft::DataType>(state.range(0));
  const auto op = static_cast<weft::RedOp>(state.range(1));
  const size_t elem = weft::DataTypeSize(dtype);
  const size_t count = kBytes / elem;
  std::vector<uint8_t> src(kBytes), dst(kBytes);
  for (size_t i = 0; i < count; ++i) {
    const float v = 1.0f / static_cast<float>(1 + i % 7);
    switch (dtype) {
      case weft::DataType::kFloat16: {
        const uint16_t h = weft::FloatToFp16(v);
        std::memcpy(&src[i * 2], &h, 2);
        break;
      }
      case weft::DataType::kBfloat16: {
        const uint16_t h = weft::FloatToBf16(v);
        std::memcpy(&src[i * 2], &h, 2);
        break;
      }
      case weft::DataType::kFloat32: std::memcpy(&src[i * 4], &v, 4); break;
      default: src[i * elem] = 1; break;
    }
  }
  dst = src;
  const auto isa = static_cast<weft::exec::internal::ReduceIsa>(state.range(2));
  const weft::exec::ReduceFn fn = weft::exec::internal::GetReduceFnForIsa(dtype, op, isa);
  if (fn == nullptr) {
    state.SkipWithError("this CPU cannot run the variant");
    return;
  }
  for (auto _ : state) {
    fn(dst.data(), src.data(), count);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * kBytes);
  state.SetLabel(std::string(weft::DataTypeName(dtype)) + " " + weft::RedOpName(op) + " " +
                 weft::exec::internal::ReduceIsaName(isa));
}

// Arguments: dtype, op, instruction set (every variant this CPU runs, so one run
// shows what the baseline build gets and what GetReduceFn picks here).
void ReduceArgs(benchmark::internal::Benchmark* b) {
  using weft::DataType;
  const auto sum = static_cast<int64_t>(weft::RedOp::kSum);
  for (auto isa : weft::exec::internal::kAllReduceIsas) {
    if (!weft::exec::internal::CpuRuns(isa)) continue;
    for (DataType t : {DataType::kFloat32, DataType::kBfloat16, DataType::kFloat16,
                       DataType::kFloat64, DataType::kInt32}) {
      b->Args({static_cast<int64_t>(t), sum, static_cast<int64_t>(isa)});
    }
  }
}
BENCHMARK(BM_Reduce)->Apply(ReduceArgs)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The executor's fused "copy a to dst, then reduce b into dst" (ReduceInto: one pass)
// against the two steps it replaces, float32 sum, from L1-resident to past the caches.
// Bytes are of one buffer, as above.
void CopyThenReduceOrInto(benchmark::State& state, bool fused) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const size_t count = bytes / sizeof(float);
  std::vector<float> a(count, 0.5f), b(count, 0.25f), dst(count, 0.0f);
  const auto dtype = weft::DataType::kFloat32;
  const auto op = weft::RedOp::kSum;
  const weft::exec::ReduceFn reduce = weft::exec::GetReduceFn(dtype, op);
  const weft::exec::ReduceIntoFn into = weft::exec::GetReduceIntoFn(dtype, op);
  for (auto _ : state) {
    if (fused) {
      into(dst.data(), a.data(), b.data(), count);
    } else {
      std::memcpy(dst.data(), a.data(), bytes);
      reduce(dst.data(), b.data(), count);
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
}
void BM_CopyThenReduce(benchmark::State& state) { CopyThenReduceOrInto(state, false); }
void BM_ReduceInto(benchmark::State& state) { CopyThenReduceOrInto(state, true); }
BENCHMARK(BM_CopyThenReduce)->RangeMultiplier(16)->Range(4 << 10, 16 << 20)->UseRealTime();
BENCHMARK(BM_ReduceInto)->RangeMultiplier(16)->Range(4 << 10, 16 << 20)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
