// The Open MPI side of the peer comparison (scripts/compare.sh): every collective weft
// has, timed the way weft-bench times it, so the two tables compare row by row.
//
//   mpirun -np 2 mpi_bench -o allreduce,broadcast -b 8 -e 16M -f 2 -n 20 -w 5 --json out.json
//
// Per size: warm-up calls, a barrier, n timed calls; the time is the slowest rank's
// average per call (MPI_MAX over ranks). float32 sum, root 0, out of place. Which MPI
// transport runs (vader shared memory, tcp) is the launcher's choice (--mca btl ...).
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "peer_common.h"

namespace {

using peerbench::Op;

// A call of one collective on `count` elements per rank (weft's meaning of count).
std::function<void()> MpiCall(const Op& op, float* send, float* recv, size_t count) {
  const int c = static_cast<int>(count);
  const std::string name = op.name;
  MPI_Comm w = MPI_COMM_WORLD;
  if (name == "allreduce") return [=] { MPI_Allreduce(send, recv, c, MPI_FLOAT, MPI_SUM, w); };
  if (name == "reduce") return [=] { MPI_Reduce(send, recv, c, MPI_FLOAT, MPI_SUM, 0, w); };
  // MPI_Bcast is in place: the buffer is the source on the root, the target elsewhere.
  if (name == "broadcast") return [=] { MPI_Bcast(recv, c, MPI_FLOAT, 0, w); };
  if (name == "allgather")
    return [=] { MPI_Allgather(send, c, MPI_FLOAT, recv, c, MPI_FLOAT, w); };
  if (name == "reducescatter")
    return [=] { MPI_Reduce_scatter_block(send, recv, c, MPI_FLOAT, MPI_SUM, w); };
  if (name == "alltoall")
    return [=] { MPI_Alltoall(send, c, MPI_FLOAT, recv, c, MPI_FLOAT, w); };
  if (name == "gather")
    return [=] { MPI_Gather(send, c, MPI_FLOAT, recv, c, MPI_FLOAT, 0, w); };
  if (name == "scatter")
    return [=] { MPI_Scatter(send, c, MPI_FLOAT, recv, c, MPI_FLOAT, 0, w); };
  std::fprintf(stderr, "mpi_bench: no MPI call for %s\n", op.name);
  std::exit(2);
}

double TimeCall(const std::function<void()>& call, const peerbench::Options& o) {
  for (int i = 0; i < o.warmup_iters; ++i) call();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) call();
  const auto t1 = std::chrono::steady_clock::now();
  double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / o.iters;
  MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return us;
}

std::string MpiVersion() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, static_cast<size_t>(len));
  const size_t comma = s.find(',');  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
  return comma == std::string::npos ? s : s.substr(0, comma);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const peerbench::Options o = peerbench::ParseOptions(argc, argv, rank == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const peerbench::Rss at_init = peerbench::ReadRss();  // before the benchmark's buffers
  // Count ranges beyond int would need MPI's large-count calls; weft-bench sizes fit.
  const size_t max_elems = o.max_bytes / sizeof(float) * static_cast<size_t>(n);
  std::vector<float> send(max_elems + 1, 1.0f), recv(max_elems + 1, 0.0f);

  std::vector<peerbench::Row> rows;
  if (rank == 0) std::printf("# %s, %d ranks\n# op size(B) time(us) busbw(GB/s)\n",
                             MpiVersion().c_str(), n);
  for (const Op* op : o.ops) {
    for (size_t count : peerbench::Counts(o, *op, sizeof(float), n)) {
      const double us = TimeCall(MpiCall(*op, send.data(), recv.data(), count), o);
      rows.push_back(peerbench::MakeRow(*op, count, sizeof(float), n, us));
      if (rank == 0) peerbench::PrintRow(rows.back());
    }
  }
  const peerbench::Rss at_end = peerbench::ReadRss();
  const int64_t mine[3] = {at_init.now, at_end.now, at_end.peak};
  std::vector<int64_t> rss_all(3 * static_cast<size_t>(n));
  MPI_Gather(mine, 3, MPI_INT64_T, rss_all.data(), 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
  int rc = 0;
  if (rank == 0 && !o.json_path.empty() &&
      !peerbench::WriteJson(o, "openmpi", MpiVersion(), "mpi", n, rows, rss_all)) {
    std::fprintf(stderr, "mpi_bench: cannot write %s\n", o.json_path.c_str());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
