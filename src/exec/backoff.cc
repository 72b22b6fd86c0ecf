#include "exec/backoff.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace weft::exec {
namespace {

// Fruitless passes before yielding (one core per rank / oversubscribed), and before
// sleeping.
constexpr int kSpinPolls = 200;
constexpr int kOversubscribedSpinPolls = 4;
constexpr int kYieldPolls = 2000;
constexpr auto kShmSleep = std::chrono::microseconds(200);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

Backoff::Backoff(bool oversubscribed)
    : spin_polls_(oversubscribed ? kOversubscribedSpinPolls : kSpinPolls) {}

bool Oversubscribed(const transport::Mesh& mesh) {
  const auto& hosts = mesh.host_ids();
  if (hosts.size() != static_cast<size_t>(mesh.size())) return false;
  const std::string& mine = hosts[mesh.rank()];
  const auto ranks_on_host = std::count(hosts.begin(), hosts.end(), mine);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return false;
  return ranks_on_host > CPU_COUNT(&set);
}

void Backoff::Idle(const std::vector<transport::Link*>& links, const Deadline& deadline,
                   int max_poll_ms) {
  ++idle_;
  if (idle_ < spin_polls_) {
    CpuRelax();
    return;
  }
  if (idle_ < kYieldPolls) {
    sched_yield();
    return;
  }
  pollfds_.clear();
  bool all_have_fds = true;
  for (auto* link : links) {
    if (!link->Busy()) continue;
    int fd = link->PollFd();
    if (fd < 0) {
      all_have_fds = false;
      break;
    }
    pollfds_.push_back({fd, static_cast<short>(POLLIN | (link->WantsWrite() ? POLLOUT : 0)), 0});
  }
  if (all_have_fds && !pollfds_.empty()) {
    poll(pollfds_.data(), pollfds_.size(), std::min(deadline.RemainingMs(), max_poll_ms));
  } else if (!deadline.expired()) {
    std::this_thread::sleep_for(kShmSleep);
  }
}

}  // namespace weft::exec
