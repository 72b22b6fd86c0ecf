// The Gloo side of the peer comparison (scripts/compare.sh): Debian's libgloo with its TCP
// device (Gloo has no shared-memory transport), timed the way weft-bench times it.
//
//   GLOO_RANK=r GLOO_SIZE=n GLOO_STORE_DIR=/tmp/x [GLOO_HOST=127.0.0.1]
//     gloo_bench -o allreduce -b 8 -e 16M -f 2 -n 20 -w 5 --json out.json
//
// Ranks meet through a gloo FileStore in GLOO_STORE_DIR (one fresh directory per run) and
// bind the TCP device to GLOO_HOST (default 127.0.0.1; a veth address across namespaces).
// Per size: warm-up calls, a barrier, n timed calls; time = the slowest rank's average
// (a Gloo max-allreduce). float32 sum, root 0, out of place except reduce-scatter, which
// Gloo offers only as the in-place ReduceScatterHalvingDoubling class.
//
// The option objects (and their registered buffers) are built once per size and reused,
// which is Gloo at its best: a caller that builds them per call (as torch does) pays more.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peer_common.h"

namespace {

using peerbench::Op;
using Ctx = std::shared_ptr<gloo::Context>;
using ReduceFn = void (*)(void*, const void*, const void*, size_t);

int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) {
    std::fprintf(stderr, "gloo_bench: %s is not set\n", name);
    std::exit(2);
  }
  return std::atoi(v);
}

// A call of one collective on `count` elements per rank (weft's meaning of count).
std::function<void()> GlooCall(const Ctx& ctx, const Op& op, float* send, float* recv,
                               size_t count) {
  const std::string name = op.name;
  const int n = ctx->size;
  const bool root = ctx->rank == 0;
  const ReduceFn sum = &gloo::sum<float>;
  if (name == "allreduce") {
    auto o = std::make_shared<gloo::AllreduceOptions>(ctx);
    o->setInput(send, count);
    o->setOutput(recv, count);
    o->setReduceFunction(sum);
    return [o] { gloo::allreduce(*o); };
  }
  if (name == "reduce") {
    auto o = std::make_shared<gloo::ReduceOptions>(ctx);
    o->setInput(send, count);
    o->setOutput(recv, count);  // every rank: Gloo uses it as scratch off the root
    o->setRoot(0);
    o->setReduceFunction(sum);
    return [o] { gloo::reduce(*o); };
  }
  if (name == "broadcast") {
    auto o = std::make_shared<gloo::BroadcastOptions>(ctx);
    if (root) o->setInput(send, count);
    o->setOutput(recv, count);
    o->setRoot(0);
    return [o] { gloo::broadcast(*o); };
  }
  if (name == "allgather") {
    auto o = std::make_shared<gloo::AllgatherOptions>(ctx);
    o->setInput(send, count);
    o->setOutput(recv, count * n);
    return [o] { gloo::allgather(*o); };
  }
  if (name == "reducescatter") {
    // In place over the whole send buffer; each rank keeps its chunk. The buffer holds
    // zeros (see main), so the repeated in-place sums stay finite.
    auto a = std::make_shared<gloo::ReduceScatterHalvingDoubling<float>>(
        ctx, std::vector<float*>{send}, static_cast<int>(count * n),
        std::vector<int>(n, static_cast<int>(count)));
    return [a] { a->run(); };
  }
  if (name == "alltoall") {
    auto o = std::make_shared<gloo::AlltoallOptions>(ctx);
    o->setInput(send, count * n);
    o->setOutput(recv, count * n);
    return [o] { gloo::alltoall(*o); };
  }
  if (name == "gather") {
    auto o = std::make_shared<gloo::GatherOptions>(ctx);
    o->setInput(send, count);
    if (root) o->setOutput(recv, count * n);
    o->setRoot(0);
    return [o] { gloo::gather(*o); };
  }
  if (name == "scatter") {
    auto o = std::make_shared<gloo::ScatterOptions>(ctx);
    if (root) {
      std::vector<float*> chunks;
      for (int r = 0; r < n; ++r) chunks.push_back(send + static_cast<size_t>(r) * count);
      o->setInputs(chunks, count);
    }
    o->setOutput(recv, count);
    o->setRoot(0);
    return [o] { gloo::scatter(*o); };
  }
  std::fprintf(stderr, "gloo_bench: no Gloo call for %s\n", op.name);
  std::exit(2);
}

double TimeCall(const Ctx& ctx, const std::function<void()>& call, const peerbench::Options& o) {
  for (int i = 0; i < o.warmup_iters; ++i) call();
  gloo::BarrierOptions barrier(ctx);
  gloo::barrier(barrier);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) call();
  const auto t1 = std::chrono::steady_clock::now();
  double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / o.iters;
  double slowest = 0;
  gloo::AllreduceOptions max(ctx);
  max.setInput(&us, 1);
  max.setOutput(&slowest, 1);
  max.setReduceFunction(static_cast<ReduceFn>(&gloo::max<double>));
  gloo::allreduce(max);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  const int rank = EnvInt("GLOO_RANK"), n = EnvInt("GLOO_SIZE");
  const char* dir = std::getenv("GLOO_STORE_DIR");
  const char* host = std::getenv("GLOO_HOST");
  if (dir == nullptr) {
    std::fprintf(stderr, "gloo_bench: GLOO_STORE_DIR is not set\n");
    return 2;
  }
  const peerbench::Options o = peerbench::ParseOptions(argc, argv, rank == 0);

  gloo::transport::tcp::attr attr(host != nullptr ? host : "127.0.0.1");
  auto dev = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(dir);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, n);
  ctx->setTimeout(std::chrono::seconds(120));
  ctx->connectFullMesh(store, dev);
  const peerbench::Rss at_init = peerbench::ReadRss();  // before the benchmark's buffers

  const size_t max_elems = o.max_bytes / sizeof(float) * static_cast<size_t>(n);
  std::vector<peerbench::Row> rows;
  const std::string version = std::to_string(GLOO_VERSION_MAJOR) + "." +
                              std::to_string(GLOO_VERSION_MINOR) + "." +
                              std::to_string(GLOO_VERSION_PATCH);
  if (rank == 0) std::printf("# Gloo %s (tcp), %d ranks\n# op size(B) time(us) busbw(GB/s)\n",
                             version.c_str(), n);
  for (const Op* op : o.ops) {
    const bool in_place = std::string(op->name) == "reducescatter";
    std::vector<float> send(max_elems + 1, in_place ? 0.0f : 1.0f), recv(max_elems + 1, 0.0f);
    for (size_t count : peerbench::Counts(o, *op, sizeof(float), n)) {
      const double us = TimeCall(ctx, GlooCall(ctx, *op, send.data(), recv.data(), count), o);
      rows.push_back(peerbench::MakeRow(*op, count, sizeof(float), n, us));
      if (rank == 0) peerbench::PrintRow(rows.back());
    }
  }
  const peerbench::Rss at_end = peerbench::ReadRss();
  int64_t mine[3] = {at_init.now, at_end.now, at_end.peak};
  std::vector<int64_t> rss_all(3 * static_cast<size_t>(n));
  gloo::AllgatherOptions rss_opts(ctx);
  rss_opts.setInput(mine, 3);
  rss_opts.setOutput(rss_all.data(), rss_all.size());
  gloo::allgather(rss_opts);
  if (rank == 0 && !o.json_path.empty() &&
      !peerbench::WriteJson(o, "gloo", version, "tcp", n, rows, rss_all)) {
    std::fprintf(stderr, "gloo_bench: cannot write %s\n", o.json_path.c_str());
    return 1;
  }
  // Nobody leaves before rank 0 has written: a closing pair would fail its last reads.
  gloo::BarrierOptions done(ctx);
  gloo::barrier(done);
  return 0;
}
