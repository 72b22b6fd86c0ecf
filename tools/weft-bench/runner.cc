#include "runner.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "check.h"
#include "dtypes.h"
#include "weft_error.h"

namespace weftbench {
namespace {

// One time for the row from every rank's (nccl-tests -a): by default the slowest rank's,
// which defines when the collective is done everywhere.
double CombineTimes(const World& w, int average, double mine) {
  double t = mine;
  if (average == 0) {
    CheckWeft(weftBroadcast(&t, &t, 1, weftFloat64, 0, w.comm), w.comm, "weftBroadcast(time)");
    return t;
  }
  const weftRedOp_t op = average == 1 ? weftAvg : average == 2 ? weftMin : weftMax;
  CheckWeft(weftAllReduce(&t, &t, 1, weftFloat64, op, w.comm), w.comm, "weftAllReduce(time)");
  return t;
}

void* AllocTouched(size_t bytes, bool shared) {
  // Page aligned like a real training buffer; aligned_alloc wants a multiple of it.
  constexpr size_t kAlign = 4096;
  const size_t rounded = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  void* p = nullptr;
  if (shared) {
    if (weftMemAlloc(&p, rounded) != weftSuccess) p = nullptr;
  } else {
    p = std::aligned_alloc(kAlign, rounded);
  }
  if (p == nullptr) {
    std::fprintf(stderr, "weft-bench: cannot allocate %zu bytes\n", rounded);
    std::exit(1);
  }
  std::memset(p, 0, rounded);  // fault the pages in now, not inside the timed loop
  return p;
}

struct Pointers {
  const void* send;
  void* recv;
};

Pointers Layout(const Collective& c, bool in_place, const Buffers& b, size_t count, size_t typesize,
                int rank) {
  if (!in_place) return {b.send(), b.recv()};
  auto* base = static_cast<char*>(b.in_place());
  const size_t offset = static_cast<size_t>(rank) * count * typesize;
  switch (c.in_place) {
    case InPlace::kSendInsideRecv: return {base + offset, base};
    case InPlace::kRecvInsideSend: return {base, base + offset};
    default: return {base, base};
  }
}

ModeResult RunMode(const World& w, const Options& o, const Collective& c, bool in_place,
                   const CallArgs& args, const CheckSpec& spec, size_t bytes) {
  ModeResult m;
  m.ran = true;
  void* send = const_cast<void*>(args.send);
  // The timed runs see real data (no NaN/denormal surprises in the reductions).
  FillInputs(spec, send);
  for (int i = 0; i < o.warmup_iters; ++i) CheckWeft(c.call(args), w.comm, c.name);

  CheckWeft(weftBarrier(w.comm), w.comm, "weftBarrier");
  const auto t0 = std::chrono::steady_clock::now();
  const long long calls = static_cast<long long>(o.iters) * o.agg_iters;
  for (long long i = 0; i < calls; ++i) CheckWeft(c.call(args), w.comm, c.name);
  const auto t1 = std::chrono::steady_clock::now();
  // Read before the timing allreduce below replaces it. sendrecv is point-to-point,
  // which has no algorithm and leaves the name of the barrier above (the flight
  // recorder calls it "p2p" too).
  const char* algorithm = "";
  CheckWeft(weftCommGetLastAlgorithm(w.comm, &algorithm), w.comm, "weftCommGetLastAlgorithm");
  m.algorithm = std::string_view(c.name) == "sendrecv" ? "p2p" : algorithm;
  const double avg_us =
      std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(calls);
  m.time_us = CombineTimes(w, o.average, avg_us);
  m.algbw = avg_us > 0 ? static_cast<double>(bytes) / (avg_us * 1e3) : 0;  // GB/s
  m.busbw = m.algbw * c.bus_factor(w.nranks);

  if (o.check) {
    // One more run on fresh inputs (in place, the timed runs overwrote them). The
    // output is poisoned first, so an element never written counts as wrong, except
    // where the output is (part of) the input.
    if (!in_place || c.in_place == InPlace::kSendInsideRecv) Poison(spec, args.recv);
    FillInputs(spec, send);
    CheckWeft(c.call(args), w.comm, c.name);
    int64_t wrong = CountWrong(spec, args.recv);
    CheckWeft(weftAllReduce(&wrong, &wrong, 1, weftInt64, weftSum, w.comm), w.comm,
              "weftAllReduce(#wrong)");
    m.wrong = wrong;
  }
  return m;
}

}  // namespace

Buffers::Buffers(const World& w, bool shared, const Collective& c, size_t max_count,
                 size_t typesize) {
  const size_t send = c.send_elems(max_count, w.nranks) * typesize;
  const size_t recv = c.recv_elems(max_count, w.nranks) * typesize;
  send_ = AllocTouched(send, shared);
  recv_ = AllocTouched(recv, shared);
  in_place_ = AllocTouched(std::max(send, recv), shared);
  if (!shared) return;
  comm_ = w.comm;
  const size_t sizes[3] = {send, recv, std::max(send, recv)};
  void* ptrs[3] = {send_, recv_, in_place_};
  for (int i = 0; i < 3; ++i) {
    if (weftCommRegister(comm_, ptrs[i], std::max<size_t>(sizes[i], 1), &handles_[i]) !=
        weftSuccess) {
      std::fprintf(stderr, "weft-bench: %s\n", weftGetLastError(comm_));
      std::exit(1);
    }
  }
}

Buffers::~Buffers() {
  void* ptrs[3] = {send_, recv_, in_place_};
  for (int i = 0; i < 3; ++i) {
    if (comm_ != nullptr) {
      (void)weftCommDeregister(comm_, handles_[i]);
      (void)weftMemFree(ptrs[i]);
    } else {
      std::free(ptrs[i]);
    }
  }
}

Row MeasureSize(const World& w, const Options& o, const Collective& c, weftDataType_t dtype,
                weftRedOp_t redop, size_t bytes, Buffers& buffers) {
  const size_t typesize = Info(dtype).size;
  const size_t count = CountForBytes(c, bytes, typesize, w.nranks);
  const size_t total = BytesForCount(c, count, typesize, w.nranks);
  Row row{c.name,
          total,
          total / typesize,  // nccl-tests: the count column is S / typesize
          Info(dtype).name,
          c.reduces ? RedOpName(redop) : "none",
          c.rooted ? o.root : -1,
          {},
          {}};
  const CheckSpec spec{&c, dtype, redop, o.root, w.rank, w.nranks, count};
  for (bool in_place : {false, true}) {
    if (in_place && c.in_place == InPlace::kUnsupported) continue;  // reported as N/A
    const Pointers p = Layout(c, in_place, buffers, count, typesize, w.rank);
    const CallArgs args{p.send, p.recv, count, dtype, redop, o.root, w.rank, w.nranks, w.comm};
    (in_place ? row.in_place : row.out_of_place) = RunMode(w, o, c, in_place, args, spec, total);
  }
  return row;
}

}  // namespace weftbench
