// weft-bench: nccl-tests style bandwidth and correctness benchmark, over the public C
// API only. One process per rank; the world comes from the launcher's environment
// (weftrun, torchrun, Slurm, Open MPI):
//
//   weftrun -n 4 weft-bench --collective allreduce -b 8 -e 128M -f 2 -d bfloat16 -o sum
//
// The flags are nccl-tests' (-o reduction, -r root, -g/-t 1, ...); the collective comes
// from --collective or from the program's name (an all_reduce_perf link runs allreduce),
// since nccl-tests has one program per collective and no flag for it.
//
// Exit status: 0 when every check passed, 1 on wrong results or a weft error, 2 on
// a usage error.
#include <weft/weft.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collectives.h"
#include "dtypes.h"
#include "options.h"
#include "report.h"
#include "rss.h"
#include "runner.h"
#include "weft_error.h"

namespace weftbench {
namespace {

// Requested sizes: min, min*f, ... up to max (nccl-tests -b/-e/-f), or min, min+i, ...
// with -i and no -f.
std::vector<size_t> Sizes(const Options& o) {
  std::vector<size_t> sizes;
  if (o.step_bytes > 0) {
    for (size_t s = o.min_bytes; s <= o.max_bytes; s += o.step_bytes) {
      sizes.push_back(s);
      if (o.max_bytes - s < o.step_bytes) break;  // the next step would pass max (or wrap)
    }
    return sizes;
  }
  for (double s = static_cast<double>(o.min_bytes); s <= static_cast<double>(o.max_bytes);
       s *= o.step_factor) {
    sizes.push_back(static_cast<size_t>(s));
    if (s == 0) s = 1.0 / o.step_factor;  // 0 * f stays 0: go on from 1 byte
  }
  return sizes;
}

// Every rank's resident memory (after init; at the end: now and peak), for rank 0's report.
std::vector<RankRss> GatherRss(const World& w, const RssKiB& at_init) {
  const RssKiB at_end = ReadRss();
  const int64_t mine[3] = {at_init.now, at_end.now, at_end.peak};
  std::vector<int64_t> all(3 * static_cast<size_t>(w.nranks));
  CheckWeft(weftAllGather(mine, all.data(), 3, weftInt64, w.comm), w.comm, "weftAllGather");
  std::vector<RankRss> rss(static_cast<size_t>(w.nranks));
  for (size_t r = 0; r < rss.size(); ++r) rss[r] = {all[3 * r], all[3 * r + 1], all[3 * r + 2]};
  return rss;
}

// True when a launcher weft recognises set this process's rank (docs/CONFIGURATION.md,
// "Launchers").
bool LaunchedByALauncher() {
  for (const char* v : {"WEFT_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK",
                        "PMIX_RANK"}) {
    const char* s = std::getenv(v);
    if (s != nullptr && *s != '\0') return true;
  }
  return false;
}

// As nccl-tests does, a run with no launcher is one process: a world of one rank.
void InitWorld(World* w) {
  if (LaunchedByALauncher()) {
    CheckWeft(weftCommInitFromEnv(&w->comm), nullptr, "weftCommInitFromEnv");
    return;
  }
  std::fprintf(stderr, "weft-bench: no launcher found: running as one process (world size 1); "
                       "for N ranks: weftrun -n N weft-bench ...\n");
  weftUniqueId id;
  CheckWeft(weftGetUniqueId(&id), nullptr, "weftGetUniqueId");
  CheckWeft(weftCommInitRank(&w->comm, 1, id, 0), nullptr, "weftCommInitRank");
}

int Run(const Options& o) {
  World w{};
  InitWorld(&w);
  CheckWeft(weftCommUserRank(w.comm, &w.rank), w.comm, "weftCommUserRank");
  CheckWeft(weftCommCount(w.comm, &w.nranks), w.comm, "weftCommCount");
  if (o.root >= w.nranks) {
    if (w.rank == 0)
      std::fprintf(stderr, "weft-bench: --root %d but only %d ranks\n", o.root, w.nranks);
    weftCommDestroy(w.comm);
    return 2;
  }
  const bool leader = w.rank == 0;
  // The library's own footprint: resident memory once the communicator is up (links
  // connected, shared-memory rings mapped), before any benchmark buffer exists.
  CheckWeft(weftBarrier(w.comm), w.comm, "weftBarrier");
  const RssKiB at_init = ReadRss();
  if (leader) PrintPreamble(o, w.nranks);

  std::vector<Row> rows;
  int64_t wrong_total = 0;
  double busbw_sum = 0;
  int busbw_n = 0;
  const std::vector<size_t> sizes = Sizes(o);
  for (const auto& op : o.ops) {
    const Collective& c = *FindCollective(op);
    if (leader) PrintHeader(c.name);
    // Data movement ignores the reduction: one pass, not one per redop.
    const std::vector<weftRedOp_t> redops =
        c.reduces ? o.redops : std::vector<weftRedOp_t>{weftSum};
    for (weftDataType_t dtype : o.dtypes) {
      const size_t typesize = Info(dtype).size;
      Buffers buffers(w, o.shared_mem, c, CountForBytes(c, o.max_bytes, typesize, w.nranks),
                      typesize);
      for (weftRedOp_t redop : redops) {
        size_t previous = SIZE_MAX;
        for (size_t bytes : sizes) {
          // Sizes that round down to the same buffer (e.g. 0 and 1 byte) run once.
          const size_t total = BytesForCount(c, CountForBytes(c, bytes, typesize, w.nranks),
                                             typesize, w.nranks);
          if (total == previous) continue;
          previous = total;
          Row row = MeasureSize(w, o, c, dtype, redop, bytes, buffers);
          for (const ModeResult* m : {&row.out_of_place, &row.in_place}) {
            if (!m->ran) continue;
            busbw_sum += m->busbw;
            ++busbw_n;
            if (m->wrong > 0) wrong_total += m->wrong;
          }
          if (leader) PrintRow(row);
          rows.push_back(std::move(row));
        }
      }
    }
  }
  const double avg_busbw = busbw_n > 0 ? busbw_sum / busbw_n : 0;
  const std::vector<RankRss> rss = GatherRss(w, at_init);
  bool ok = wrong_total == 0;
  if (leader) {
    PrintFooter(wrong_total, o.check, avg_busbw, rss);
    if (!o.json_path.empty())
      ok = WriteJson(o.json_path, o, w.nranks, rows, wrong_total, avg_busbw, rss) && ok;
  }
  // Every rank fails alike on wrong results; the barrier keeps the others from exiting
  // (and a fail-fast launcher from killing rank 0) before rank 0 has written its output.
  CheckWeft(weftBarrier(w.comm), w.comm, "weftBarrier");
  CheckWeft(weftCommDestroy(w.comm), nullptr, "weftCommDestroy");
  // Every rank knows wrong_total (it is summed over ranks), so all agree on failure.
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace weftbench

int main(int argc, char** argv) {
  const auto parsed = weftbench::ParseOptions(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return weftbench::Run(*parsed.options);
}
