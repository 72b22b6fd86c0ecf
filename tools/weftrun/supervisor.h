// The single-threaded loop that watches every rank: it copies their output (prefixed),
// reaps them, and tears the job down when one fails, when the job times out, or when
// weftrun itself is signalled. Teardown is SIGTERM to every rank's process group, then
// SIGKILL after the grace period; at the end every group gets SIGKILL so nothing a rank
// started outlives weftrun.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "line_prefixer.h"
#include "rank_process.h"

namespace weftrun {

struct SupervisorConfig {
  double grace_s = 5.0;
  double timeout_s = 0.0;  // 0: no limit
  bool prefix = true;
  // A failing rank does not tear the job down: the others run on (e.g. to report the
  // failure themselves); the exit code is still the first failing rank's.
  bool keep_going = false;
  // Where the ranks write SIGUSR1 dumps (printed when weftrun forwards one).
  std::string dump_dir;
};

// Blocks SIGCHLD, SIGINT, SIGTERM, SIGHUP and SIGUSR1 in the calling thread (call before any other
// thread starts, so all threads inherit the mask) and returns a signalfd for them.
weft::Result<weft::net::Fd> BlockSupervisedSignals();

class Supervisor {
 public:
  // `signal_fd` from BlockSupervisedSignals; not owned.
  Supervisor(SupervisorConfig config, int signal_fd);
  ~Supervisor();

  // Hands rank `rank`'s process to the supervisor. Call for every rank before Run.
  void Add(int rank, RankProcess process);
  // Also usable before Run, e.g. when starting a later rank failed: tears down the ranks
  // started so far and makes Run return `exit_code`.
  void Abort(int exit_code);
  // Blocks until every rank has exited and its output is drained. Returns weftrun's exit
  // code: 0, the first failing rank's code (128+signal if killed), 124 on --timeout, or
  // 128+signal when weftrun was interrupted.
  int Run();

 private:
  struct Rank;
  using Clock = std::chrono::steady_clock;

  void ReapExited();
  void OnRankExit(Rank& r, int wait_status);
  void HandleSignals();
  void ReadOutput(Rank& r, bool is_err);
  void BeginTeardown(int sig, int exit_code);
  void SignalAll(int sig);
  // SIGUSR1 to each rank's own process (not its group: a wrapper shell would die of it)
  // that handles it: every weft rank writes its flight-recorder dump and carries on.
  void AskForDumps(const std::string& why);
  int PollTimeoutMs() const;

  SupervisorConfig config_;
  int signal_fd_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  Clock::time_point start_;
  bool tearing_down_ = false;
  bool sent_kill_ = false;
  Clock::time_point kill_at_{};
  // --timeout: dumps asked for; SIGTERM follows at this time.
  std::optional<Clock::time_point> terminate_at_;
  int exit_code_ = 0;
  int stopped_by_us_ = 0;  // ranks that ended after teardown began
};

}  // namespace weftrun
