// weft-gpu-check: what tools/gpu-check.sh runs on a machine with a GPU.
//
//   weft-gpu-check correctness [quick]  (under weftrun, any number of ranks)
//     every collective on device buffers through the *Stream API, ordered on a stream
//     behind a delay kernel and a host-to-device copy (so a call that did not wait for
//     its stream would read poison), all dtypes and ops for the reducing ones, odd
//     counts, in place and not; plus the blocking and weftI* calls on device buffers.
//   weft-gpu-check kernels       (one rank)
//     the multi-input reduction kernel's bandwidth against cudaMemcpy device-to-device.
//   weft-gpu-check bandwidth [max_bytes]   (under weftrun)
//     an nccl-tests style allreduce table on device buffers.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/types.h"
#include "gpu/kernels.h"
#include "gpu/reduce_math.h"
#include "weft/weft.h"

namespace {

using weft::DataType;
using weft::RedOp;

#define CUDA_OK(x)                                                                    \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                 \
                   cudaGetErrorString(e_));                                           \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

int g_rank = 0, g_size = 1;
weftComm_t g_comm = nullptr;

void WeftOk(weftResult_t r, const char* what) {
  if (r != weftSuccess) {
    std::fprintf(stderr, "rank %d: %s: %s: %s\n", g_rank, what, weftGetErrorString(r),
                 weftGetLastError(g_comm));
    std::fflush(nullptr);
    std::_Exit(3);  // not exit(): the worker thread may still be inside CUDA
  }
}

__global__ void Sleep(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// --- values --------------------------------------------------------------------------

void Store(DataType t, void* p, size_t i, double v) {
  switch (t) {
    case DataType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
    case DataType::kUint8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(static_cast<int>(v)); break;
    case DataType::kInt32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
    case DataType::kUint32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(static_cast<int64_t>(v)); break;
    case DataType::kInt64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
    case DataType::kUint64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(static_cast<int64_t>(v)); break;
    case DataType::kFloat16: static_cast<uint16_t*>(p)[i] = weft::FloatToFp16(static_cast<float>(v)); break;
    case DataType::kBfloat16: static_cast<uint16_t*>(p)[i] = weft::FloatToBf16(static_cast<float>(v)); break;
    case DataType::kFloat32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case DataType::kFloat64: static_cast<double*>(p)[i] = v; break;
  }
}

double Load(DataType t, const void* p, size_t i) {
  switch (t) {
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kFloat16: return weft::Fp16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBfloat16: return weft::Bf16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DataType::kFloat32: return static_cast<const float*>(p)[i];
    case DataType::kFloat64: return static_cast<const double*>(p)[i];
  }
  return 0;
}

// Rank r's input element i: small values (exact in every type; prod stays small).
double Value(int r, size_t i, RedOp op) {
  if (op == RedOp::kProd) return 1 + (r + i) % 2;
  return static_cast<double>(static_cast<int>((r * 7 + i * 3) % 11) - 3);
}

std::vector<char> Input(DataType t, int r, size_t count, RedOp op) {
  std::vector<char> v(count * weft::DataTypeSize(t));
  for (size_t i = 0; i < count; ++i) Store(t, v.data(), i, Value(r, i, op));
  return v;
}

double Tolerance(DataType t) {
  switch (t) {
    case DataType::kFloat16: return 1e-2;
    case DataType::kBfloat16: return 2e-2;
    case DataType::kFloat32: return 1e-5;
    case DataType::kFloat64: return 1e-12;
    default: return 0;
  }
}

// --- one case ------------------------------------------------------------------------

enum class Coll { kAllReduce, kReduce, kReduceScatter, kBroadcast, kAllGather, kAllToAll,
                  kGather, kScatter, kSendRecv, kBarrier };
const char* Name(Coll c) {
  static const char* n[] = {"allreduce", "reduce", "reducescatter", "broadcast", "allgather",
                            "alltoall", "gather", "scatter", "sendrecv", "barrier"};
  return n[static_cast<int>(c)];
}

struct Case {
  Coll coll;
  DataType dt;
  RedOp op;
  size_t count;
  bool in_place;
  int root;
};

int g_failures = 0, g_cases = 0;

void RunCase(const Case& c, cudaStream_t stream) {
  const int n = g_size, me = g_rank;
  const size_t es = weft::DataTypeSize(c.dt);
  const size_t cnt = c.count;
  size_t in_count = cnt, out_count = cnt;
  switch (c.coll) {
    case Coll::kReduceScatter: in_count = cnt * n; break;
    case Coll::kAllGather: case Coll::kGather: out_count = cnt * n; break;
    case Coll::kAllToAll: in_count = out_count = cnt * n; break;
    case Coll::kScatter: in_count = cnt * n; break;
    default: break;
  }
  // Expected output, from every rank's input.
  std::vector<std::vector<char>> ins(n);
  for (int r = 0; r < n; ++r) ins[r] = Input(c.dt, r, in_count, c.op);
  std::vector<char> expect(out_count * es);
  bool check = true;
  std::vector<const void*> srcs(n);
  switch (c.coll) {
    case Coll::kAllReduce: case Coll::kReduce:
      for (int r = 0; r < n; ++r) srcs[r] = ins[r].data();
      weft::gpu::ReduceNHost(expect.data(), srcs.data(), n, cnt, c.dt, c.op, n);
      check = c.coll == Coll::kAllReduce || me == c.root;
      break;
    case Coll::kReduceScatter:
      for (int r = 0; r < n; ++r) srcs[r] = ins[r].data() + me * cnt * es;
      weft::gpu::ReduceNHost(expect.data(), srcs.data(), n, cnt, c.dt, c.op, n);
      break;
    case Coll::kBroadcast: expect = ins[c.root]; break;
    case Coll::kAllGather: case Coll::kGather:
      for (int r = 0; r < n; ++r) std::memcpy(expect.data() + r * cnt * es, ins[r].data(), cnt * es);
      check = c.coll == Coll::kAllGather || me == c.root;
      break;
    case Coll::kAllToAll:
      for (int r = 0; r < n; ++r)
        std::memcpy(expect.data() + r * cnt * es, ins[r].data() + me * cnt * es, cnt * es);
      break;
    case Coll::kScatter:
      std::memcpy(expect.data(), ins[c.root].data() + me * cnt * es, cnt * es);
      break;
    case Coll::kSendRecv: expect = ins[(me + n - 1) % n]; break;
    case Coll::kBarrier: check = false; break;
  }

  // Device buffers: one allocation holds both when in place (NCCL's offsets).
  size_t in_off = 0, out_off = 0, total = 0;
  if (c.in_place) {
    switch (c.coll) {
      case Coll::kAllGather: in_off = me * cnt; total = out_count; break;
      case Coll::kReduceScatter: out_off = me * cnt; total = in_count; break;
      default: total = std::max(in_count, out_count); break;
    }
  }
  // Two buffers allocated once and reused, as with a framework's caching allocator (a
  // buffer freed while a peer still has it open through CUDA IPC is the framework's
  // business; here the handles stay few).
  static char *g_a = nullptr, *g_b = nullptr;
  static const size_t kPool = size_t{262147} * 8 * 8 + 4096;
  if (g_a == nullptr) {
    CUDA_OK(cudaMalloc(&g_a, kPool));
    CUDA_OK(cudaMalloc(&g_b, kPool));
  }
  // In place, one buffer holds `total` elements; out of place, each holds its own side.
  const size_t need = c.in_place ? total : std::max(in_count, out_count);
  if (need * es > kPool / 2) {
    std::fprintf(stderr, "case too large for the buffer pool\n");
    std::_Exit(2);
  }
  char *dbuf = nullptr, *din = nullptr, *dout = nullptr;
  if (c.in_place) {
    dbuf = g_a;
    din = dbuf + in_off * es;
    dout = dbuf + out_off * es;
  } else {
    din = g_a;
    dout = g_b;
  }
  CUDA_OK(cudaMemset(g_a, 0xEE, kPool));
  CUDA_OK(cudaMemset(g_b, 0xEE, kPool));
  CUDA_OK(cudaDeviceSynchronize());

  // On the stream: a delay, the input, the call, the output back.
  Sleep<<<1, 1, 0, stream>>>(200000);
  CUDA_OK(cudaMemcpyAsync(din, ins[me].data(), in_count * es, cudaMemcpyHostToDevice, stream));
  auto dt = static_cast<weftDataType_t>(c.dt);
  auto op = static_cast<weftRedOp_t>(c.op);
  weftResult_t r = weftSuccess;
  switch (c.coll) {
    case Coll::kAllReduce: r = weftAllReduceStream(din, dout, cnt, dt, op, g_comm, stream); break;
    case Coll::kReduce: r = weftReduceStream(din, dout, cnt, dt, op, c.root, g_comm, stream); break;
    case Coll::kReduceScatter: r = weftReduceScatterStream(din, dout, cnt, dt, op, g_comm, stream); break;
    case Coll::kBroadcast: r = weftBroadcastStream(din, dout, cnt, dt, c.root, g_comm, stream); break;
    case Coll::kAllGather: r = weftAllGatherStream(din, dout, cnt, dt, g_comm, stream); break;
    case Coll::kAllToAll: r = weftAllToAllStream(din, dout, cnt, dt, g_comm, stream); break;
    case Coll::kGather: r = weftGatherStream(din, dout, cnt, dt, c.root, g_comm, stream); break;
    case Coll::kScatter: r = weftScatterStream(din, dout, cnt, dt, c.root, g_comm, stream); break;
    case Coll::kSendRecv:
      // Receive first on odd ranks, send first on even ones; each call is ordered on the
      // stream, and the worker progresses them concurrently.
      if (me % 2) {
        r = weftRecvStream(dout, cnt, dt, (me + n - 1) % n, g_comm, stream);
        if (r == weftSuccess) r = weftSendStream(din, cnt, dt, (me + 1) % n, g_comm, stream);
      } else {
        r = weftSendStream(din, cnt, dt, (me + 1) % n, g_comm, stream);
        if (r == weftSuccess) r = weftRecvStream(dout, cnt, dt, (me + n - 1) % n, g_comm, stream);
      }
      break;
    case Coll::kBarrier: r = weftBarrierStream(g_comm, stream); break;
  }
  WeftOk(r, Name(c.coll));
  std::vector<char> got(out_count * es);
  CUDA_OK(cudaMemcpyAsync(got.data(), dout, out_count * es, cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  weftResult_t async = weftSuccess;
  WeftOk(weftCommGetAsyncError(g_comm, &async), "weftCommGetAsyncError");
  WeftOk(async, "async error");
  ++g_cases;
  if (check) {
    const double tol = Tolerance(c.dt);
    for (size_t i = 0; i < out_count; ++i) {
      double e = Load(c.dt, expect.data(), i), g = Load(c.dt, got.data(), i);
      if (!(std::fabs(e - g) <= tol * std::max(1.0, std::fabs(e)))) {
        if (g_failures < 10)
          std::fprintf(stderr,
                       "rank %d: FAIL %s %s %s count %zu in_place %d root %d: [%zu] = %g, "
                       "expected %g\n",
                       me, Name(c.coll), weft::DataTypeName(c.dt), weft::RedOpName(c.op), cnt,
                       c.in_place, c.root, i, g, e);
        ++g_failures;
        break;
      }
    }
  }
}

bool g_quick = false;  // "correctness quick": float32, two ops, one count

int Correctness() {
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const DataType all_types[] = {DataType::kInt8,    DataType::kUint8,  DataType::kInt32,
                                DataType::kUint32,  DataType::kInt64,  DataType::kUint64,
                                DataType::kFloat16, DataType::kBfloat16, DataType::kFloat32,
                                DataType::kFloat64};
  const DataType some_types[] = {DataType::kInt8, DataType::kFloat16, DataType::kFloat32,
                                 DataType::kFloat64};
  const RedOp ops[] = {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg};
  std::vector<size_t> counts = {0, 1, 1001, 262147};
  std::vector<DataType> types(std::begin(all_types), std::end(all_types));
  std::vector<DataType> few(std::begin(some_types), std::end(some_types));
  std::vector<RedOp> op_list(std::begin(ops), std::end(ops));
  if (g_quick) {
    counts = {1001};
    types = few = {DataType::kFloat32};
    op_list = {RedOp::kSum, RedOp::kAvg};
  }
  auto t0 = std::chrono::steady_clock::now();
  for (Coll coll : {Coll::kAllReduce, Coll::kReduce, Coll::kReduceScatter}) {
    int before = g_failures, cases = g_cases;
    for (DataType dt : types)
      for (RedOp op : op_list)
        for (size_t cnt : counts)
          for (bool ip : {false, true})
            RunCase({coll, dt, op, cnt, ip, g_size - 1}, stream);
    if (g_rank == 0)
      std::printf("  %-14s %4d cases  %s\n", Name(coll), g_cases - cases,
                  g_failures == before ? "ok" : "FAILED");
  }
  for (Coll coll : {Coll::kBroadcast, Coll::kAllGather, Coll::kAllToAll, Coll::kGather,
                    Coll::kScatter, Coll::kSendRecv, Coll::kBarrier}) {
    int before = g_failures, cases = g_cases;
    for (DataType dt : few)
      for (size_t cnt : counts)
        for (bool ip : {false, true}) {
          bool can_in_place = coll == Coll::kBroadcast || coll == Coll::kAllGather ||
                              coll == Coll::kAllToAll;
          if (ip && !can_in_place) continue;
          for (int root : {0, g_size - 1})
            RunCase({coll, dt, RedOp::kSum, cnt, ip, root}, stream);
        }
    if (g_rank == 0)
      std::printf("  %-14s %4d cases  %s\n", Name(coll), g_cases - cases,
                  g_failures == before ? "ok" : "FAILED");
  }
  // The blocking and non-blocking host API on device buffers.
  {
    const size_t cnt = 100003;
    float *d = nullptr;
    CUDA_OK(cudaMalloc(&d, cnt * sizeof(float)));
    std::vector<float> h(cnt, 1.0f + g_rank);
    CUDA_OK(cudaMemcpy(d, h.data(), cnt * sizeof(float), cudaMemcpyHostToDevice));
    WeftOk(weftAllReduce(d, d, cnt, weftFloat32, weftSum, g_comm), "weftAllReduce on device");
    weftRequest_t req;
    WeftOk(weftIAllReduce(d, d, cnt, weftFloat32, weftSum, g_comm, &req), "weftIAllReduce");
    WeftOk(weftWait(req), "weftWait");
    CUDA_OK(cudaMemcpy(h.data(), d, cnt * sizeof(float), cudaMemcpyDeviceToHost));
    const float one = g_size * (g_size + 1) / 2.0f;
    bool ok = h[0] == one * g_size && h[cnt - 1] == one * g_size;
    if (!ok) ++g_failures;
    if (g_rank == 0) std::printf("  %-14s %4d cases  %s\n", "blocking+weftI", 2, ok ? "ok" : "FAILED");
    CUDA_OK(cudaFree(d));
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int total_failures = g_failures;
  WeftOk(weftAllReduce(&g_failures, &total_failures, 1, weftInt32, weftSum, g_comm), "sum of failures");
  if (g_rank == 0)
    std::printf("correctness: %d ranks, %d cases per rank, %d failures, %.1f s (WEFT_CUDA_PATH=%s)\n",
                g_size, g_cases, total_failures, secs,
                std::getenv("WEFT_CUDA_PATH") ? std::getenv("WEFT_CUDA_PATH") : "auto");
  CUDA_OK(cudaStreamDestroy(stream));
  return total_failures == 0 ? 0 : 1;
}

// --- kernels: reduction vs copy --------------------------------------------------------

double TimeMs(cudaStream_t s, int iters, const std::function<void()>& body) {
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  body();  // warm-up
  CUDA_OK(cudaEventRecord(a, s));
  for (int i = 0; i < iters; ++i) body();
  CUDA_OK(cudaEventRecord(b, s));
  CUDA_OK(cudaEventSynchronize(b));
  float ms = 0;
  CUDA_OK(cudaEventElapsedTime(&ms, a, b));
  CUDA_OK(cudaEventDestroy(a));
  CUDA_OK(cudaEventDestroy(b));
  return ms / iters;
}

int Kernels() {
  const size_t bytes = size_t{1} << 30;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  std::vector<char*> bufs(5);
  for (auto& b : bufs) {
    CUDA_OK(cudaMalloc(&b, bytes));
    CUDA_OK(cudaMemset(b, 0, bytes));
  }
  const int iters = 10;
  double copy_ms = TimeMs(s, iters, [&] {
    CUDA_OK(cudaMemcpyAsync(bufs[0], bufs[1], bytes, cudaMemcpyDeviceToDevice, s));
  });
  double copy_gbs = 2.0 * bytes / (copy_ms * 1e-3) / 1e9;  // read + write
  std::printf("kernels: 1 GiB buffers, bandwidth counts bytes read + written\n");
  std::printf("  %-34s %8.3f ms %8.0f GB/s\n", "cudaMemcpy device-to-device", copy_ms, copy_gbs);
  struct V { DataType dt; RedOp op; int n; };
  const V variants[] = {{DataType::kFloat32, RedOp::kSum, 2}, {DataType::kBfloat16, RedOp::kSum, 2},
                        {DataType::kFloat16, RedOp::kSum, 2}, {DataType::kFloat32, RedOp::kSum, 4},
                        {DataType::kBfloat16, RedOp::kAvg, 4}, {DataType::kInt8, RedOp::kMax, 2},
                        {DataType::kFloat64, RedOp::kProd, 2}};
  for (const V& v : variants) {
    const size_t count = bytes / weft::DataTypeSize(v.dt);
    std::vector<const void*> in(bufs.begin() + 1, bufs.begin() + 1 + v.n);
    double ms = TimeMs(s, iters, [&] {
      auto st = weft::gpu::ReduceN(bufs[0], in.data(), v.n, count, v.dt, v.op, v.n, s);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        std::exit(2);
      }
    });
    double gbs = (v.n + 1.0) * bytes / (ms * 1e-3) / 1e9;
    char label[64];
    std::snprintf(label, sizeof(label), "reduce %d inputs %s %s", v.n, weft::DataTypeName(v.dt),
                  weft::RedOpName(v.op));
    std::printf("  %-34s %8.3f ms %8.0f GB/s  %.2fx copy\n", label, ms, gbs, gbs / copy_gbs);
  }
  for (auto b : bufs) CUDA_OK(cudaFree(b));
  return 0;
}

// --- allreduce bandwidth -------------------------------------------------------------------

int Bandwidth(size_t max_bytes) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  char *in = nullptr, *out = nullptr;
  CUDA_OK(cudaMalloc(&in, max_bytes));
  CUDA_OK(cudaMalloc(&out, max_bytes));
  CUDA_OK(cudaMemset(in, 0, max_bytes));
  if (g_rank == 0) {
    std::printf("allreduce float32 sum, device buffers, %d ranks (WEFT_CUDA_PATH=%s)\n", g_size,
                std::getenv("WEFT_CUDA_PATH") ? std::getenv("WEFT_CUDA_PATH") : "auto");
    std::printf("%12s %10s %10s %10s %12s\n", "bytes", "time_us", "algbw_GB/s", "busbw_GB/s",
                "memcpy_GB/s");
  }
  for (size_t bytes = 8; bytes <= max_bytes; bytes *= 8) {
    const size_t count = bytes / 4;
    const int iters = bytes <= (1 << 20) ? 50 : 10;
    for (int w = 0; w < 3; ++w)
      WeftOk(weftAllReduceStream(in, out, count, weftFloat32, weftSum, g_comm, s), "warm-up");
    CUDA_OK(cudaStreamSynchronize(s));
    WeftOk(weftBarrier(g_comm), "barrier");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      WeftOk(weftAllReduceStream(in, out, count, weftFloat32, weftSum, g_comm, s), "allreduce");
    CUDA_OK(cudaStreamSynchronize(s));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
    double ms_copy = TimeMs(s, 5, [&] {
      CUDA_OK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, s));
    });
    double algbw = bytes / secs / 1e9;
    double busbw = algbw * 2.0 * (g_size - 1) / g_size;
    if (g_rank == 0)
      std::printf("%12zu %10.1f %10.2f %10.2f %12.1f\n", bytes, secs * 1e6, algbw, busbw,
                  bytes / (ms_copy * 1e-3) / 1e9);
  }
  CUDA_OK(cudaFree(in));
  CUDA_OK(cudaFree(out));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "correctness";
  if (!weftCudaAvailable()) {
    std::printf("SKIP: no usable GPU: %s\n", weftCudaUnavailableReason());
    return 0;
  }
  if (mode == "kernels") return Kernels();
  int ndev = 0;
  CUDA_OK(cudaGetDeviceCount(&ndev));
  WeftOk(weftCommInitFromEnv(&g_comm), "weftCommInitFromEnv");
  WeftOk(weftCommUserRank(g_comm, &g_rank), "rank");
  WeftOk(weftCommCount(g_comm, &g_size), "size");
  CUDA_OK(cudaSetDevice(g_rank % ndev));
  int rc = 1;
  if (mode == "correctness") {
    g_quick = argc > 2 && std::string(argv[2]) == "quick";
    rc = Correctness();
  } else if (mode == "bandwidth") {
    size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (size_t{256} << 20);
    rc = Bandwidth(max_bytes);
  } else {
    std::fprintf(stderr, "usage: weft-gpu-check correctness|kernels|bandwidth [max_bytes]\n");
  }
  weftCommDestroy(g_comm);
  return rc;
}
