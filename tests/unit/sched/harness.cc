#include "harness.h"

#include <fmt/format.h>
#include <malloc.h>

#include <cstring>

#include "interpreter.h"

namespace weft::sched::testing {
namespace {

// The sweep allocates and frees buffers of a few MiB thousands of times; by default
// glibc returns them to the kernel each time and the test spends most of its time in
// page faults. Keep freed memory in the heap instead (test binary only).
const bool kKeepFreedMemory = [] {
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_TRIM_THRESHOLD, 1024 << 20);
  return true;
}();

CollectiveSpec AsRank(CollectiveSpec spec, int rank) {
  spec.rank = rank;
  return spec;
}

std::vector<std::byte> ToBytes(const std::vector<int64_t>& v) {
  std::vector<std::byte> out(v.size() * sizeof(int64_t));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<int64_t> FromBytes(const std::vector<std::byte>& b) {
  std::vector<int64_t> out(b.size() / sizeof(int64_t));
  if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(int64_t));
  return out;
}

}  // namespace

Buffers MakeInputs(const CollectiveSpec& spec) {
  Buffers in(spec.size);
  for (int r = 0; r < spec.size; ++r) {
    in[r].resize(InputCount(AsRank(spec, r)));
    for (size_t i = 0; i < in[r].size(); ++i) in[r][i] = int64_t{r} * 1000003 + int64_t(i);
  }
  return in;
}

Buffers MakeScrambledInputs(const CollectiveSpec& spec) {
  Buffers in(spec.size);
  for (int r = 0; r < spec.size; ++r) {
    in[r].resize(InputCount(AsRank(spec, r)));
    for (size_t i = 0; i < in[r].size(); ++i) {
      in[r][i] = int64_t((i * 7919 + size_t(r) * 104729 + i * r * 31) % 1009) - 500;
    }
  }
  return in;
}

Buffers Reference(const CollectiveSpec& spec, const Buffers& in, const Op& op) {
  const int n = spec.size;
  const size_t c = spec.count;
  Buffers out(n);
  for (int r = 0; r < n; ++r) out[r].assign(OutputCount(AsRank(spec, r)), 0);
  // Element i of the reduction of every rank's element (base + i), ranks in order.
  auto reduce_all = [&](size_t base, size_t i) {
    int64_t acc = in[0][base + i];
    for (int q = 1; q < n; ++q) acc = op(acc, in[q][base + i]);
    return acc;
  };
  switch (spec.coll) {
    case Collective::kAllReduce:
      for (size_t i = 0; i < c; ++i) out[0][i] = reduce_all(0, i);
      for (int r = 1; r < n; ++r) out[r] = out[0];
      break;
    case Collective::kReduce:
      for (size_t i = 0; i < c; ++i) out[spec.root][i] = reduce_all(0, i);
      break;
    case Collective::kBroadcast:
      for (int r = 0; r < n; ++r) out[r] = in[spec.root];
      break;
    case Collective::kAllGather:
      for (int r = 0; r < n; ++r)
        for (int q = 0; q < n; ++q)
          for (size_t i = 0; i < c; ++i) out[r][q * c + i] = in[q][i];
      break;
    case Collective::kReduceScatter:
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < c; ++i) out[r][i] = reduce_all(r * c, i);
      break;
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r)
        for (int q = 0; q < n; ++q)
          for (size_t i = 0; i < c; ++i) out[r][q * c + i] = in[q][r * c + i];
      break;
    case Collective::kGather:
      for (int q = 0; q < n; ++q)
        for (size_t i = 0; i < c; ++i) out[spec.root][q * c + i] = in[q][i];
      break;
    case Collective::kScatter:
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < c; ++i) out[r][i] = in[spec.root][r * c + i];
      break;
    case Collective::kBarrier: break;
  }
  return out;
}

std::string CaseName(const Algorithm& algorithm, const CollectiveSpec& spec, bool in_place) {
  return fmt::format("{}:{} size={} root={} count={} {}", CollectiveName(algorithm.coll),
                     algorithm.name, spec.size, spec.root, spec.count,
                     in_place ? "in-place" : "out-of-place");
}

::testing::AssertionResult RunAndCompare(const Algorithm& algorithm, const CollectiveSpec& spec,
                                         bool in_place, const Buffers& inputs, const Op& op) {
  const std::vector<Schedule> schedules = BuildAllRanks(algorithm.build, spec);
  std::vector<std::vector<std::byte>> bytes;
  for (const auto& v : inputs) bytes.push_back(ToBytes(v));
  ReduceFn reduce = [&op](void* dst, const void* src, size_t count) {
    auto* d = static_cast<int64_t*>(dst);
    const auto* s = static_cast<const int64_t*>(src);
    for (size_t i = 0; i < count; ++i) d[i] = op(d[i], s[i]);
  };
  InterpretOptions options;
  options.in_place = in_place;
  auto result = Interpret(spec, schedules, bytes, sizeof(int64_t), reduce, options);
  if (!result.ok()) {
    return ::testing::AssertionFailure()
           << CaseName(algorithm, spec, in_place) << ": " << result.status().ToString();
  }
  const Buffers expected = Reference(spec, inputs, op);
  for (int r = 0; r < spec.size; ++r) {
    const std::vector<int64_t> got = FromBytes(result.value()[r]);
    if (got.size() != expected[r].size()) {
      return ::testing::AssertionFailure()
             << CaseName(algorithm, spec, in_place) << ": rank " << r << " output has "
             << got.size() << " elements, expected " << expected[r].size();
    }
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected[r][i]) {
        return ::testing::AssertionFailure()
               << CaseName(algorithm, spec, in_place) << ": rank " << r << " element " << i
               << " is " << got[i] << ", expected " << expected[r][i] << "\nrank " << r << "'s "
               << ToString(schedules[r]).substr(0, 4000);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace weft::sched::testing
