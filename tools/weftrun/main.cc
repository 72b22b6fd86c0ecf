// weftrun: starts N local ranks of a weft program and supervises them.
//
//   weftrun -n N [--timeout SEC] [--grace SEC] [--no-prefix] [-x NAME=VALUE]... [--] PROG ARGS
//
// weftrun hosts the job's rendezvous store and tells each rank where it is through
// WEFT_RANK, WEFT_WORLD_SIZE, WEFT_LOCAL_RANK, WEFT_LOCAL_WORLD_SIZE and WEFT_STORE_ADDR
// (see src/bootstrap/launcher_env.h). torchrun's variables (RANK, ...) are deliberately
// not set, so launcher detection never has two candidates that disagree.
//
// WEFT_AUX_PORT is a second port on the store's host, free when weftrun started (the
// kernel picked it), for a framework's own rendezvous: weft.torch serves torch's TCPStore
// there (MASTER_PORT) when a script runs under weftrun.
//
// It also gives every rank WEFT_SECRET, the job's secret: the user's (from weftrun's own
// environment, or -x WEFT_SECRET=...) or else 32 fresh random bytes. The store it hosts
// and every data connection authenticate with it (src/bootstrap/job_key.h), so a job
// under weftrun is authenticated without configuration.
#include <cstdio>
#include <string>

#include "bootstrap/job_key.h"
#include "bootstrap/store.h"
#include "comm/flight_recorder.h"
#include "core/env.h"
#include "net/socket.h"
#include "options.h"
#include "rank_process.h"
#include "supervisor.h"

namespace {

std::vector<std::pair<std::string, std::string>> RankEnvironment(const weftrun::Options& o,
                                                                 int rank,
                                                                 const std::string& store,
                                                                 const std::string& aux_port,
                                                                 const std::string& secret) {
  // -x entries come last and so win, even over weftrun's own variables: that is how a
  // test starts ranks with a wrong world size on purpose.
  std::vector<std::pair<std::string, std::string>> mine = {
      {"WEFT_RANK", std::to_string(rank)},
      {"WEFT_WORLD_SIZE", std::to_string(o.nranks)},
      {"WEFT_LOCAL_RANK", std::to_string(rank)},
      {"WEFT_LOCAL_WORLD_SIZE", std::to_string(o.nranks)},
      {"WEFT_STORE_ADDR", store},
      {"WEFT_SECRET", secret},
  };
  if (!aux_port.empty()) mine.emplace_back("WEFT_AUX_PORT", aux_port);
  mine.insert(mine.end(), o.extra_env.begin(), o.extra_env.end());
  return mine;
}

// A port on `host` that nothing listens on now: bound (port 0: the kernel's choice) and
// let go again. Someone may take it before the ranks do, but far less likely than a
// fixed offset from the store's port, which may be any other process's ephemeral port.
// Empty if none could be bound.
std::string FreePort(weft::net::SockAddr host) {
  host.set_port(0);
  auto fd = weft::net::Listen(host, 1);
  if (!fd.ok()) return "";
  auto local = weft::net::LocalAddress(fd->get());
  return local.ok() ? std::to_string(local->port()) : "";
}

}  // namespace

// The ranks' SIGUSR1 dump folder: WEFT_FLIGHT_RECORDER_DIR as the ranks get it (-x wins
// over weftrun's own environment), else the library's default.
std::string DumpDir(const weftrun::Options& o) {
  for (const auto& [k, v] : o.extra_env)
    if (k == "WEFT_FLIGHT_RECORDER_DIR" && !v.empty()) return v;
  return weft::comm::SignalDumpDir();
}

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
  // The job's secret: -x WEFT_SECRET wins (it reaches the ranks last), then weftrun's own
  // environment, else a fresh one.
  std::string secret = weft::GetEnv("WEFT_SECRET").value_or("");
  for (const auto& [name, value] : opts.extra_env)
    if (name == "WEFT_SECRET") secret = value;
  if (secret.empty()) {
    auto fresh = weft::bootstrap::NewSecret(32);
    if (!fresh.ok()) {
      std::fprintf(stderr, "weftrun: %s\n", fresh.status().ToString().c_str());
      return 1;
    }
    secret = fresh.value();
  }
  auto store =
      weft::bootstrap::StoreServer::Start(*bind, weft::bootstrap::KeyFromSecret(secret));
  if (!store.ok()) {
    std::fprintf(stderr, "weftrun: cannot start the rendezvous store on %s: %s\n",
                 opts.store_addr.c_str(), store.status().ToString().c_str());
    return 1;
  }
  const std::string store_addr = (*store)->address().ToString();
  const std::string aux_port = FreePort((*store)->address());

  weftrun::Supervisor supervisor(
      {opts.grace_s, opts.timeout_s, opts.prefix, opts.keep_going, DumpDir(opts)},
      signal_fd->get());
  for (int rank = 0; rank < opts.nranks; ++rank) {
    weftrun::SpawnSpec spec{*path, opts.command,
                            weftrun::MergeEnvironment(RankEnvironment(opts, rank, store_addr, aux_port, secret))};
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
