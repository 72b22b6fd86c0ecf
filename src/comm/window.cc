#include "comm/window.h"

#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/deadline.h"
#include "core/futex.h"
#include "exec/backoff.h"
#include "transport/mesh.h"

namespace weft::comm {
namespace {

namespace shm = transport::shm;

constexpr uint32_t kCardMagic = 0x6e697777;  // "wwin"
// One signal word per 64-byte line: peers signalling one rank do not share a line.
constexpr size_t kWordStride = 64 / sizeof(uint32_t);

// What each rank tells the others at creation. Fixed size, no pointers: it crosses
// processes byte for byte through the all-gather.
struct Card {
  uint32_t magic = kCardMagic;
  int32_t pid = 0;
  int32_t buf_fd = -1;
  int32_t sig_fd = -1;
  uint64_t alloc_bytes = 0;  // the buffer's whole allocation
  uint64_t offset = 0;       // of the range in it
  uint64_t bytes = 0;        // the range
  uint64_t sig_bytes = 0;
  char host[256] = {};   // transport::LocalHostId(), cut to fit
  char error[256] = {};  // why this rank has no window; "" when it has one
};

// The second exchange: whether each rank mapped every other's range.
struct Mapped {
  int32_t ok = 1;
  char why[256] = {};
};

template <size_t N>
void CopyText(char (&to)[N], const std::string& from) {
  std::memset(to, 0, N);
  std::memcpy(to, from.data(), std::min(from.size(), N - 1));
}

template <size_t N>
std::string Text(const char (&from)[N]) {
  return std::string(from, strnlen(from, N));
}

}  // namespace

std::atomic<uint32_t>* Window::Word(std::atomic<uint32_t>* block, int from) const {
  return block + static_cast<size_t>(from) * kWordStride;
}

Result<std::unique_ptr<Window>> Window::Create(int rank, int size, void* buff, size_t bytes,
                                               double timeout_s, const AllGather& allgather) {
  std::unique_ptr<Window> w(new Window(rank, size, timeout_s));
  Card mine;
  mine.pid = static_cast<int32_t>(getpid());
  CopyText(mine.host, transport::LocalHostId());
  mine.sig_bytes = static_cast<uint64_t>(size) * kWordStride * sizeof(uint32_t);
  // Whatever goes wrong here still takes part in the exchange (with its reason), so the
  // peers fail with it instead of waiting for this rank.
  std::string error;
  auto block = shm::SharedAlloc(mine.sig_bytes);  // zero-filled
  shm::SharedRange range;
  if (!block.ok()) {
    error = "no memory for its signal block: " + block.status().message();
  } else {
    w->own_signals_ = block.value();
    shm::LookUpShared(w->own_signals_, mine.sig_bytes, &range);
    mine.sig_fd = range.fd;
  }
  if (error.empty() && bytes > 0) {
    auto found = shm::FindShared(buff, bytes);
    if (!found.ok()) {
      error = fmt::format(
          "its buffer ({} bytes at {}) is not inside one weftMemAlloc "
          "allocation: {}",
          bytes, buff, found.status().message());
    } else {
      mine.buf_fd = found->fd;
      mine.alloc_bytes = found->alloc_bytes;
      mine.offset = found->offset;
      mine.bytes = bytes;
    }
  }
  CopyText(mine.error, error);

  std::vector<Card> cards(size);
  WEFT_RETURN_IF_ERROR(allgather(&mine, cards.data(), sizeof(Card)));
  for (int r = 0; r < size; ++r) {
    if (cards[r].magic != kCardMagic)
      return ProtocolError(fmt::format("weftWinCreate: rank {}'s card is garbled", r));
    if (cards[r].error[0] != '\0')
      return InvalidArgument(fmt::format("weftWinCreate: rank {}: {}", r, Text(cards[r].error)));
    // Sizes that this rank will map and write through: a card that does not add up is
    // refused before any of it is believed.
    const Card& c = cards[r];
    if (c.sig_bytes != mine.sig_bytes || c.offset > c.alloc_bytes ||
        c.bytes > c.alloc_bytes - c.offset || (c.bytes > 0 && c.buf_fd < 0) || c.sig_fd < 0) {
      return ProtocolError(fmt::format(
          "weftWinCreate: rank {}'s card does not add up (range of {} bytes at {} in an "
          "allocation of {}, signal block of {} bytes where {} were expected)",
          r, c.bytes, c.offset, c.alloc_bytes, c.sig_bytes, mine.sig_bytes));
    }
  }
  for (int r = 1; r < size; ++r) {
    if (Text(cards[r].host) != Text(cards[0].host)) {
      return InvalidUsage(fmt::format(
          "weftWinCreate: windows need every rank on one host (they are memory the ranks "
          "map); rank {} is on {}, rank 0 on {}",
          r, Text(cards[r].host), Text(cards[0].host)));
    }
  }

  // Every rank is on this host: more of them than this process's CPUs spin less.
  cpu_set_t cpus;
  w->oversubscribed_ = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && size > CPU_COUNT(&cpus);

  Mapped done;
  for (int r = 0; r < size && done.ok; ++r) {
    PeerView& v = w->views_[r];
    v.pid = cards[r].pid;
    v.bytes = cards[r].bytes;
    if (r == rank) {
      v.base = static_cast<char*>(buff);
      v.signals = static_cast<std::atomic<uint32_t>*>(w->own_signals_);
      continue;
    }
    v.pidfd = static_cast<int>(syscall(SYS_pidfd_open, v.pid, 0));  // -1: kill(2) instead
    auto sig = shm::MapPeerBuffer(v.pid, cards[r].sig_fd, cards[r].sig_bytes);
    if (!sig.ok()) {
      done.ok = 0;
      CopyText(done.why, fmt::format("rank {}'s signal block: {}", r, sig.status().message()));
      break;
    }
    v.signals = static_cast<std::atomic<uint32_t>*>(sig->base());
    w->mappings_.push_back(std::move(sig).value());
    if (v.bytes == 0) continue;
    auto buf = shm::MapPeerBuffer(v.pid, cards[r].buf_fd, cards[r].alloc_bytes);
    if (!buf.ok()) {
      done.ok = 0;
      CopyText(done.why, fmt::format("rank {}'s buffer: {}", r, buf.status().message()));
      break;
    }
    v.base = static_cast<char*>(buf->base()) + cards[r].offset;
    w->mappings_.push_back(std::move(buf).value());
  }
  std::vector<Mapped> all(size);
  WEFT_RETURN_IF_ERROR(allgather(&done, all.data(), sizeof(Mapped)));
  for (int r = 0; r < size; ++r) {
    if (!all[r].ok) {
      return Unavailable(
          fmt::format("weftWinCreate: rank {} could not map {}", r, Text(all[r].why)));
    }
  }
  return w;
}

Window::~Window() {
  for (PeerView& v : views_)
    if (v.pidfd >= 0) close(v.pidfd);
  mappings_.clear();  // unmaps the peers' memory before this rank's block goes
  if (own_signals_ != nullptr) (void)shm::SharedFree(own_signals_);
}

Status Window::CheckPeer(int peer, const char* api) const {
  if (peer < 0 || peer >= size_) {
    return InvalidArgument(
        fmt::format("{}: rank {}: peer {} is out of range [0, {})", api, rank_, peer, size_));
  }
  return Status::Ok();
}

Status Window::Peer(int peer, void** base, size_t* bytes) const {
  WEFT_RETURN_IF_ERROR(CheckPeer(peer, "weftWinPeerPtr"));
  *base = views_[peer].base;
  *bytes = views_[peer].bytes;
  return Status::Ok();
}

Status Window::Put(const void* src, size_t bytes, int peer, size_t offset) const {
  WEFT_RETURN_IF_ERROR(CheckPeer(peer, "weftWinPut"));
  const PeerView& v = views_[peer];
  if (offset > v.bytes || bytes > v.bytes - offset) {
    return InvalidArgument(fmt::format(
        "weftWinPut: rank {}: {} bytes at offset {} do not fit in rank {}'s window of {} bytes",
        rank_, bytes, offset, peer, v.bytes));
  }
  if (bytes == 0) return Status::Ok();
  if (src == nullptr)
    return InvalidArgument(fmt::format("weftWinPut: rank {}: src is NULL", rank_));
  std::memmove(v.base + offset, src, bytes);  // memmove: src may be the window itself
  return Status::Ok();
}

Status Window::Signal(int peer) {
  WEFT_RETURN_IF_ERROR(CheckPeer(peer, "weftWinSignal"));
  std::atomic<uint32_t>* word = Word(views_[peer].signals, rank_);
  word->fetch_add(1, std::memory_order_release);  // the puts before it happen-before its read
  FutexWakeAll(word);
  return Status::Ok();
}

bool Window::PeerGone(int peer) const {
  const PeerView& v = views_[peer];
  if (v.pidfd < 0) return kill(v.pid, 0) != 0 && errno == ESRCH;
  struct pollfd p = {v.pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

Status Window::WaitSignal(int peer, double timeout_s) {
  WEFT_RETURN_IF_ERROR(CheckPeer(peer, "weftWinWaitSignal"));
  std::atomic<uint32_t>* word = Word(views_[rank_].signals, peer);
  const uint32_t want = consumed_[peer] + 1;
  const Deadline deadline = Deadline::AfterSeconds(timeout_s);
  // Spin, then yield, then sleep on the word: a futex wake-up costs tens of µs on a busy
  // host, where a small put's signal comes within a microsecond or two.
  exec::Backoff backoff(oversubscribed_);
  while (true) {
    const uint32_t seen = word->load(std::memory_order_acquire);
    // Counters wrap at 2^32: compare by difference.
    if (static_cast<int32_t>(seen - want) >= 0) {
      consumed_[peer] = want;
      return Status::Ok();
    }
    const bool brief = backoff.IdleBriefly();  // spun or yielded this pass
    if (brief && !backoff.TimeToCheck()) continue;
    if (peer != rank_ && PeerGone(peer)) {
      return Unavailable(fmt::format(
          "weftWinWaitSignal: rank {} waited for signal {} from rank {}, whose process (pid "
          "{}) is gone",
          rank_, want, peer, views_[peer].pid));
    }
    if (deadline.expired()) {
      return DeadlineExceeded(fmt::format(
          "weftWinWaitSignal: rank {} waited {} s for signal {} from rank {} (timed out)", rank_,
          timeout_s, want, peer));
    }
    if (brief) continue;
    // Woken by the signal's FutexWakeAll; at most 50 ms between the checks above.
    FutexWaitAny({{word, seen}}, std::min<int64_t>(50'000, deadline.RemainingMs() * 1000 + 1000));
  }
}

}  // namespace weft::comm
