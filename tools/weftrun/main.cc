// weftrun: starts N local ranks of a weft program and supervises them.
//
//   weftrun -n N [--timeout SEC] [--grace SEC] [--no-prefix] [-x NAME=VALUE]... [--] PROG ARGS
//
// weftrun hosts the job's rendezvous store and tells each rank where it is through
// WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, WEFT_LOCAL_WORLD_SIZE and WEFT_STORE_ADDR
// (see src/bootstrap/launcher_env.h). torchrun's variables (RANK, ...) are deliberately
// not set, so launcher detection never has two candidates that disagree.
#include <cstdio>
#include <string>

#include "bootstrap/store.h"
#include "options.h"
#include "rank_process.h"
#include "supervisor.h"

namespace {

std::vector<std::pair<std::string, std::string>> RankEnvironment(const weftrun::Options& o,
                                                                 int rank,
                                                                 const std::string& store) {
  // -x entries come last and so win, even over weftrun's own variables: that is how a
  // test starts ranks with a wrong world size on purpose.
  std::vector<std::pair<std::string, std::string>> mine = {
      {"WEFT_RANK", std::to_string(rank)},
      {"WEFT_WORLD_SIZE", std::to_string(o.nranks)},
      {"WEFT_LOCAL_RANK", std::to_string(rank)},
      {"WEFT_LOCAL_WORLD_SIZE", std::to_string(o.nranks)},
      {"WEFT_STORE_ADDR", store},
  };
  mine.insert(mine.end(), o.extra_env.begin(), o.extra_env.end());
  return mine;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = weftrun::ParseOptions(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  const weftrun::Options& opts = *parsed.options;

  auto path = weftrun::ResolveProgram(opts.command.front());
  if (!path) {
    std::fprintf(stderr, "weftrun: cannot find executable '%s'\n", opts.command.front().c_str());
    return 127;
  }

  // Before the store's thread exists, so that thread inherits the blocked mask and the
  // signals land on our signalfd.
  auto signal_fd = weftrun::BlockSupervisedSignals();
  if (!signal_fd.ok()) {
    std::fprintf(stderr, "weftrun: %s\n", signal_fd.status().ToString().c_str());
    return 1;
  }

  auto bind = weft::net::SockAddr::Parse(opts.store_addr);
  if (!bind.ok()) {
    std::fprintf(stderr, "weftrun: --store-addr: %s\n", bind.status().ToString().c_str());
    return 2;
  }
  auto store = weft::bootstrap::StoreServer::Start(*bind);
  if (!store.ok()) {
    std::fprintf(stderr, "weftrun: cannot start the rendezvous store on %s: %s\n",
                 opts.store_addr.c_str(), store.status().ToString().c_str());
    return 1;
  }
  const std::string store_addr = (*store)->address().ToString();

  weftrun::Supervisor supervisor({opts.grace_s, opts.timeout_s, opts.prefix, opts.keep_going},
                                 signal_fd->get());
  for (int rank = 0; rank < opts.nranks; ++rank) {
    weftrun::SpawnSpec spec{*path, opts.command,
                            weftrun::MergeEnvironment(RankEnvironment(opts, rank, store_addr))};
    auto proc = weftrun::SpawnRank(spec);
    if (!proc.ok()) {
      std::fprintf(stderr, "weftrun: cannot start rank %d: %s\n", rank,
                   proc.status().ToString().c_str());
      supervisor.Abort(1);
      break;
    }
    supervisor.Add(rank, std::move(*proc));
  }
  return supervisor.Run();
}
