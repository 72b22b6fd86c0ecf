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
// Longest sleep on wake words: a peer that died, an abort from another thread and the
// deadline are noticed by polling, not by a wake-up.
constexpr int kMaxWakeSleepMs = 10;

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

bool Backoff::IdleBriefly() {
  ++idle_;
  if (idle_ < spin_polls_) {
    CpuRelax();
    return true;
  }
  if (idle_ < kYieldPolls) {
    sched_yield();
    return true;
  }
  return false;
}

const std::vector<transport::Link*>& Backoff::Awaited(const std::vector<transport::Link*>& links,
                                                      const std::vector<transport::Link*>* watch) {
  awaited_.clear();
  for (auto* link : links)
    if (link->Busy()) awaited_.push_back(link);
  if (watch != nullptr) awaited_.insert(awaited_.end(), watch->begin(), watch->end());
  return awaited_;
}

void Backoff::Sleep(const std::vector<transport::Link*>& links, const Deadline& deadline,
                    int max_poll_ms, const std::vector<transport::Link*>* watch) {
  if (!armed_.empty()) {
    // Armed by the previous pass, which moved nothing: sleep until a peer rings. The
    // cap keeps deadlines, liveness checks and aborts from another thread on time.
    const int64_t ms = std::min({deadline.RemainingMs(), max_poll_ms, kMaxWakeSleepMs});
    FutexWaitAny(waits_, ms * 1000);
    Disarm();
    return;
  }
  const std::vector<transport::Link*>& awaited = Awaited(links, watch);
  if (ArmWakes(awaited)) return;
  pollfds_.clear();
  bool all_have_fds = true;
  for (auto* link : awaited) {
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

bool Backoff::ArmWakes(const std::vector<transport::Link*>& awaited) {
  for (auto* link : awaited) {
    std::atomic<uint32_t>* word = link->ArmWake();
    if (word == nullptr) {
      Disarm();
      return false;
    }
    armed_.push_back(link);
    // Read after ArmWake's fence and before the caller's last pass: acquire pairs with
    // the release of the bell in the peer's ShmLink::RingPeer.
    waits_.push_back({word, word->load(std::memory_order_acquire)});
  }
  return !armed_.empty();
}

void Backoff::Disarm() {
  for (auto* link : armed_) link->DisarmWake();
  armed_.clear();
  waits_.clear();
}

}  // namespace weft::exec
