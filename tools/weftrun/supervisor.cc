#include "supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace weftrun {

struct Supervisor::Rank {
  int rank;
  pid_t pid;
  bool alive = true;
  weft::net::Fd out, err;
  LinePrefixer out_lines, err_lines;
  Rank(int r, RankProcess p, const std::string& prefix)
      : rank(r), pid(p.pid), out(std::move(p.out)), err(std::move(p.err)),
        out_lines(STDOUT_FILENO, prefix), err_lines(STDERR_FILENO, prefix) {}
};

namespace {

constexpr int kPollMs = 100;  // also the backstop for a coalesced SIGCHLD
// After the last rank exits, how long to wait for the read ends of its pipes to reach EOF
// (a descendant that escaped its process group may hold them open).
constexpr auto kDrainLimit = std::chrono::seconds(2);
// --timeout: how long the ranks have to write their dumps before SIGTERM.
constexpr auto kDumpPause = std::chrono::seconds(2);

void Say(const std::string& msg) {
  std::string line = "weftrun: " + msg + "\n";
  WriteAll(STDERR_FILENO, line.data(), line.size());
}

}  // namespace

weft::Result<weft::net::Fd> BlockSupervisedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1}) sigaddset(&set, sig);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return weft::ErrnoStatus("sigprocmask", errno);
  // A reader that went away (e.g. `weftrun ... | head`) must not kill the supervisor
  // while ranks still run; writes then fail with EPIPE, which WriteAll ignores.
  signal(SIGPIPE, SIG_IGN);
  int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return weft::ErrnoStatus("signalfd", errno);
  return weft::net::Fd(fd);
}

Supervisor::Supervisor(SupervisorConfig config, int signal_fd)
    : config_(config), signal_fd_(signal_fd), start_(Clock::now()) {}

Supervisor::~Supervisor() = default;

void Supervisor::Add(int rank, RankProcess process) {
  for (int fd : {process.out.get(), process.err.get()}) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  std::string prefix = config_.prefix ? "[" + std::to_string(rank) + "] " : "";
  ranks_.push_back(std::make_unique<Rank>(rank, std::move(process), prefix));
}

void Supervisor::Abort(int exit_code) { BeginTeardown(SIGTERM, exit_code); }

void Supervisor::SignalAll(int sig) {
  for (auto& r : ranks_) {
    // The whole group: whatever the rank started (a shell's children) goes too.
    if (r->alive) ::kill(-r->pid, sig);
  }
}

// True when `pid` has a handler for `sig` (SigCgt in /proc/PID/status): a rank that is
// not a weft program (or has no communicator yet) would die of SIGUSR1's default action.
bool CatchesSignal(pid_t pid, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    const unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
    return (mask >> (sig - 1)) & 1;
  }
  return false;
}

void Supervisor::AskForDumps(const std::string& why) {
  int asked = 0;
  for (auto& r : ranks_) {
    if (r->alive && CatchesSignal(r->pid, SIGUSR1)) {
      ::kill(r->pid, SIGUSR1);
      ++asked;
    }
  }
  Say(why + ": asked " + std::to_string(asked) + " of " + std::to_string(ranks_.size()) +
      " ranks for a flight-recorder dump in " + config_.dump_dir +
      " (read them with: weft-doctor " + config_.dump_dir + ")");
}

void Supervisor::BeginTeardown(int sig, int exit_code) {
  if (tearing_down_) return;
  tearing_down_ = true;
  exit_code_ = exit_code;
  kill_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(config_.grace_s));
  SignalAll(sig);
}

void Supervisor::OnRankExit(Rank& r, int status) {
  r.alive = false;
  bool failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (tearing_down_) {
    ++stopped_by_us_;
    return;
  }
  if (!failed) return;
  int code;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    Say("rank " + std::to_string(r.rank) + " killed by signal " + std::to_string(sig) + " (" +
        strsignal(sig) + ")");
    code = 128 + sig;
  } else {
    code = WEXITSTATUS(status);
    Say("rank " + std::to_string(r.rank) + " exited with code " + std::to_string(code));
  }
  if (config_.keep_going) {
    if (exit_code_ == 0) exit_code_ = code;
    return;
  }
  BeginTeardown(SIGTERM, code);
}

void Supervisor::ReapExited() {
  for (auto& r : ranks_) {
    if (!r->alive) continue;
    int status = 0;
    pid_t got;
    do {
      got = ::waitpid(r->pid, &status, WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got == r->pid) OnRankExit(*r, status);
  }
}

void Supervisor::HandleSignals() {
  signalfd_siginfo si;
  while (::read(signal_fd_, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
    int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) continue;  // reaping happens at the top of the loop
    if (sig == SIGUSR1) {  // "what is the job waiting for?": the job runs on
      AskForDumps("received SIGUSR1");
      continue;
    }
    if (tearing_down_ && (sig == SIGINT || sig == SIGTERM)) {
      // A second interrupt: the user does not want to wait for the grace period.
      SignalAll(SIGKILL);
      sent_kill_ = true;
      continue;
    }
    Say(std::string("received ") + strsignal(sig) + ", forwarding to all ranks");
    BeginTeardown(sig, 128 + sig);
  }
}

void Supervisor::ReadOutput(Rank& r, bool is_err) {
  weft::net::Fd& fd = is_err ? r.err : r.out;
  LinePrefixer& lines = is_err ? r.err_lines : r.out_lines;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n > 0) {
      lines.Feed(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    lines.Flush();  // EOF or a read error: this stream is done
    fd.reset();
    return;
  }
}

int Supervisor::PollTimeoutMs() const {
  auto now = Clock::now();
  auto ms = std::chrono::milliseconds(kPollMs);
  if (tearing_down_ && !sent_kill_) {
    ms = std::min(ms, std::chrono::ceil<std::chrono::milliseconds>(kill_at_ - now));
  }
  return static_cast<int>(std::max<long long>(0, ms.count()));
}

int Supervisor::Run() {
  const bool has_timeout = config_.timeout_s > 0;
  const auto job_deadline =
      start_ + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(config_.timeout_s));
  std::optional<Clock::time_point> drain_until;
  std::vector<pollfd> fds;
  std::vector<std::pair<Rank*, bool>> owners;  // pollfd index - 1 -> (rank, is stderr)

  for (;;) {
    ReapExited();
    bool any_alive = std::any_of(ranks_.begin(), ranks_.end(), [](auto& r) { return r->alive; });
    if (!any_alive && !drain_until) {
      // Descendants left in a rank's group would keep its pipes open (and outlive us).
      for (auto& r : ranks_) ::kill(-r->pid, SIGKILL);
      drain_until = Clock::now() + kDrainLimit;
    }

    fds.clear();
    owners.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    for (auto& r : ranks_) {
      for (bool is_err : {false, true}) {
        const auto& fd = is_err ? r->err : r->out;
        if (!fd.valid()) continue;
        fds.push_back({fd.get(), POLLIN, 0});
        owners.emplace_back(r.get(), is_err);
      }
    }
    if (drain_until && (owners.empty() || Clock::now() >= *drain_until)) break;

    int rc = ::poll(fds.data(), fds.size(), PollTimeoutMs());
    if (rc < 0 && errno != EINTR) {
      Say(std::string("poll failed: ") + strerror(errno));
      BeginTeardown(SIGKILL, 1);
      sent_kill_ = true;
    }
    if (rc > 0) {
      if (fds[0].revents != 0) HandleSignals();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) ReadOutput(*owners[i - 1].first, owners[i - 1].second);
      }
    }

    auto now = Clock::now();
    if (has_timeout && !tearing_down_ && !terminate_at_ && any_alive && now >= job_deadline) {
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%g", config_.timeout_s);
      // Dumps first, so a hung job leaves the record of what it waited for; the ranks
      // write them from a thread of their own, well within the pause.
      AskForDumps(std::string("timeout: the job ran longer than ") + secs + " s");
      terminate_at_ = now + kDumpPause;
    }
    if (terminate_at_ && !tearing_down_ && now >= *terminate_at_) {
      Say("terminating all ranks after the timeout");
      BeginTeardown(SIGTERM, 124);
    }
    if (tearing_down_ && !sent_kill_ && now >= kill_at_) {
      bool any = std::any_of(ranks_.begin(), ranks_.end(), [](auto& r) { return r->alive; });
      if (any) Say("grace period over; sending SIGKILL to the remaining ranks");
      SignalAll(SIGKILL);
      sent_kill_ = true;
    }
  }
  for (auto& r : ranks_) {
    r->out_lines.Flush();
    r->err_lines.Flush();
  }
  if (stopped_by_us_ > 0) Say("stopped " + std::to_string(stopped_by_us_) + " other rank(s)");
  return exit_code_;
}

}  // namespace weftrun
