// Every collective on the CPU fake's device buffers across real processes (run under
// weftrun with WEFT_FAKE_DEVICE=1): the direct path opens peers' allocations across
// processes (the fake's memfds, through /proc/<pid>/fd), the staged path copies through
// pinned memory, and with WEFT_CUDA_STREAM_WAIT=memop the *Stream calls return before the
// stream reaches them. Each call is queued behind a delay and the copy of its input onto
// the stream, so a call that did not wait for its stream would read the stale input.
// Exit 0 when every result is right; 1 with the first wrong one named.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "gpu/fake_device.h"
#include "weft/weft.h"

namespace {

using weft::gpu::FakeDevice;

int g_rank = 0, g_size = 1;
weftComm_t g_comm = nullptr;
void* g_stream = nullptr;
int g_failures = 0;
bool g_async = false;  // WEFT_CUDA_STREAM_WAIT=memop

FakeDevice& Fake() { return *weft::gpu::ActiveFake(); }

void Ok(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: %s failed: %s\n", g_rank, what.c_str(), weftGetLastError(g_comm));
  std::exit(2);
}

int32_t Value(int rank, size_t i) { return (rank + 1) * 100 + static_cast<int32_t>(i % 97); }

// A device buffer of `n` int32 holding -7 (the poison a result must overwrite).
int32_t* DeviceBuffer(size_t n) {
  auto p = Fake().AllocDevice(std::max<size_t>(n, 1) * sizeof(int32_t));
  Ok(p.ok(), "AllocDevice");
  std::vector<int32_t> poison(n, -7);
  Ok(Fake().Write(p.value(), poison.data(), n * sizeof(int32_t)).ok(), "Write");
  return static_cast<int32_t*>(p.value());
}

// Runs `call` on the stream after a 200 ms delay and the copy of `input` into `in`, then
// reads `out_n` elements of `out` back and compares them with `expect` (skipped if empty).
// With stream memory operations the call must return while the delay still holds the
// stream (NCCL's semantics): well under 200 ms, where it takes microseconds.
void Case(const std::string& name, int32_t* in, const std::vector<int32_t>& input, int32_t* out,
          size_t out_n, const std::vector<int32_t>& expect,
          const std::function<weftResult_t(weftStream_t)>& call) {
  Ok(Fake().DelayAsync(200'000, g_stream).ok(), "DelayAsync");
  Ok(Fake().CopyAsync(in, input.data(), input.size() * sizeof(int32_t), g_stream).ok(), "copy in");
  const auto start = std::chrono::steady_clock::now();
  Ok(call(static_cast<weftStream_t>(g_stream)) == weftSuccess, name);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              start).count();
  if (g_async && ms > 150) {
    std::fprintf(stderr, "rank %d: %s took %.1f ms: it waited for its stream\n", g_rank,
                 name.c_str(), ms);
    ++g_failures;
  }
  std::vector<int32_t> got(out_n);
  Ok(Fake().CopyAsync(got.data(), out, out_n * sizeof(int32_t), g_stream).ok(), "copy out");
  Ok(Fake().SyncStream(g_stream, weft::Deadline::AfterSeconds(120)).ok(), "SyncStream");
  for (size_t i = 0; i < expect.size(); ++i) {
    if (got[i] != expect[i]) {
      std::fprintf(stderr, "rank %d: %s: element %zu is %d, expected %d\n", g_rank, name.c_str(),
                   i, got[i], expect[i]);
      ++g_failures;
      return;
    }
  }
  if (g_rank == 0) std::printf("%-28s ok (call returned in %.2f ms)\n", name.c_str(), ms);
}

std::vector<int32_t> Mine(size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = Value(g_rank, i);
  return v;
}
std::vector<int32_t> SumOver(size_t n) {
  std::vector<int32_t> v(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (int r = 0; r < g_size; ++r) v[i] += Value(r, i);
  return v;
}

void Reductions(size_t count) {
  const std::string c = std::to_string(count);
  int32_t* a = DeviceBuffer(count);
  int32_t* b = DeviceBuffer(count);
  Case("allreduce in place " + c, a, Mine(count), a, count, SumOver(count), [&](weftStream_t s) {
    return weftAllReduceStream(a, a, count, weftInt32, weftSum, g_comm, s);
  });
  Case("allreduce " + c, a, Mine(count), b, count, SumOver(count), [&](weftStream_t s) {
    return weftAllReduceStream(a, b, count, weftInt32, weftSum, g_comm, s);
  });
  const int root = g_size - 1;
  Case("reduce to the last rank " + c, a, Mine(count), b, count,
       g_rank == root ? SumOver(count) : std::vector<int32_t>(),
       [&](weftStream_t s) {
         return weftReduceStream(a, b, count, weftInt32, weftSum, root, g_comm, s);
       });
  Fake().FreeDevice(a);
  Fake().FreeDevice(b);
}

void Movement(size_t per) {
  const size_t n = g_size, all = per * n;
  int32_t* in = DeviceBuffer(all);
  int32_t* out = DeviceBuffer(all);
  std::vector<int32_t> sum = SumOver(all), gathered;
  for (int r = 0; r < g_size; ++r)
    for (size_t i = 0; i < per; ++i) gathered.push_back(Value(r, i));
  Case("reducescatter", in, Mine(all), out, per,
       std::vector<int32_t>(sum.begin() + g_rank * per, sum.begin() + (g_rank + 1) * per),
       [&](weftStream_t s) {
         return weftReduceScatterStream(in, out, per, weftInt32, weftSum, g_comm, s);
       });
  Case("allgather", in, Mine(per), out, all, gathered, [&](weftStream_t s) {
    return weftAllGatherStream(in, out, per, weftInt32, g_comm, s);
  });
  std::vector<int32_t> from0(all);
  for (size_t i = 0; i < all; ++i) from0[i] = Value(0, i);
  Case("broadcast in place", in, Mine(all), in, all, from0, [&](weftStream_t s) {
    return weftBroadcastStream(in, in, all, weftInt32, 0, g_comm, s);
  });
  // Alltoall: rank r's block j holds Value(r, j*per + i); rank j receives block j of each.
  std::vector<int32_t> a2a;
  for (int r = 0; r < g_size; ++r)
    for (size_t i = 0; i < per; ++i) a2a.push_back(Value(r, g_rank * per + i));
  Case("alltoall", in, Mine(all), out, all, a2a, [&](weftStream_t s) {
    return weftAllToAllStream(in, out, per, weftInt32, g_comm, s);
  });
  Case("gather to rank 0", in, Mine(per), out, all,
       g_rank == 0 ? gathered : std::vector<int32_t>(),
       [&](weftStream_t s) { return weftGatherStream(in, out, per, weftInt32, 0, g_comm, s); });
  std::vector<int32_t> scattered(per);
  for (size_t i = 0; i < per; ++i) scattered[i] = Value(0, g_rank * per + i);
  Case("scatter from rank 0", in, Mine(all), out, per, scattered,
       [&](weftStream_t s) { return weftScatterStream(in, out, per, weftInt32, 0, g_comm, s); });
  Fake().FreeDevice(in);
  Fake().FreeDevice(out);
}

}  // namespace

int main() {
  if (weft::gpu::ActiveFake() == nullptr) {
    std::fprintf(stderr, "fake_device_check: run with WEFT_FAKE_DEVICE=1\n");
    return 2;
  }
  Ok(weftCommInitFromEnv(&g_comm) == weftSuccess, "weftCommInitFromEnv");
  Ok(weftCommUserRank(g_comm, &g_rank) == weftSuccess, "rank");
  Ok(weftCommCount(g_comm, &g_size) == weftSuccess, "count");
  const char* wait = std::getenv("WEFT_CUDA_STREAM_WAIT");
  g_async = wait != nullptr && std::string(wait) == "memop";
  auto stream = Fake().CreateStream();
  Ok(stream.ok(), "CreateStream");
  g_stream = stream.value();
  Reductions(1000);
  Reductions(100'003);  // past the direct path's one-shot size: reduce-scatter + allgather
  Movement(333);
  Fake().DestroyStream(g_stream);
  Ok(weftCommDestroy(g_comm) == weftSuccess, "weftCommDestroy");
  if (g_failures == 0 && g_rank == 0) std::printf("fake_device_check: all right\n");
  return g_failures == 0 ? 0 : 1;
}
