#include "transport/rail_link.h"

#include <fmt/format.h>
#include <sys/epoll.h>

#include <cerrno>

namespace weft::transport {

Result<std::unique_ptr<RailLink>> RailLink::Create(int self, int peer,
                                                   std::vector<std::unique_ptr<Link>> rails,
                                                   uint64_t stripe_min) {
  if (rails.size() < 2 || rails.size() > static_cast<size_t>(kMaxRails))
    return Internal(fmt::format("rank {}: {} rails to rank {}", self, rails.size(), peer));
  net::Fd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return ErrnoStatus(fmt::format("rank {}: epoll_create1", self), errno);
  return std::unique_ptr<RailLink>(
      new RailLink(self, peer, std::move(rails), stripe_min, std::move(ep)));
}

RailLink::RailLink(int self, int peer, std::vector<std::unique_ptr<Link>> rails,
                   uint64_t stripe_min, net::Fd epoll_fd)
    : Link(self, peer),
      epoll_fd_(std::move(epoll_fd)),
      rails_(std::move(rails)),
      stripe_min_(stripe_min),
      registered_fd_(rails_.size(), -1),
      armed_(rails_.size(), 0) {}

RailLink::~RailLink() = default;

void RailLink::PostSend(SendOp* op) {
  Stripe s[kMaxRails];
  int n = PlanStripes(op->header.bytes, rails(), stripe_min_, s);
  for (int k = 0; k < n; ++k) {
    SendOp& part = send_parts_.emplace_back();
    part.header = op->header;
    part.header.bytes = s[k].bytes;
    part.data = static_cast<const uint8_t*>(op->data) + s[k].offset;
    rails_[k]->PostSend(&part);
  }
  sends_.push_back({op, n});
}

void RailLink::PostRecv(RecvOp* op) {
  Stripe s[kMaxRails];
  int n = PlanStripes(op->expect.bytes, rails(), stripe_min_, s);
  for (int k = 0; k < n; ++k) {
    RecvOp& part = recv_parts_.emplace_back();
    part.expect = op->expect;
    part.expect.bytes = s[k].bytes;
    part.data = static_cast<uint8_t*>(op->data) + s[k].offset;
    rails_[k]->PostRecv(&part);
  }
  recvs_.push_back({op, n});
}

namespace {

// Completes, in FIFO order, the ops whose parts are all done; drops those parts.
template <typename Op>
bool Retire(std::deque<RailLink::Pending<Op>>* ops, std::deque<Op>* parts) {
  bool any = false;
  while (!ops->empty()) {
    auto& front = ops->front();
    for (int k = 0; k < front.parts; ++k)
      if (!(*parts)[k].done) return any;
    for (int k = 0; k < front.parts; ++k) parts->pop_front();
    front.op->done = true;
    ops->pop_front();
    any = true;
  }
  return any;
}

}  // namespace

Result<bool> RailLink::Progress() {
  if (!failed_.ok()) return failed_;
  bool moved = false;
  for (size_t k = 0; k < rails_.size(); ++k) {
    Result<bool> r = rails_[k]->Progress();
    if (!r.ok()) {
      std::string note = fmt::format(" [{} rail {} of {}]", Name(), k, rails_.size());
      if (r.status().code() == Code::kInvalidUsage)
        note = fmt::format(
            " [{} rail {} of {}: messages of {} bytes or more travel as one stripe per rail, "
            "so the byte counts above may be a stripe's]",
            Name(), k, rails_.size(), stripe_min_);
      failed_ = Status(r.status().code(), r.status().message() + note);
      return failed_;
    }
    moved = moved || r.value();
  }
  bool s = Retire(&sends_, &send_parts_);
  bool r = Retire(&recvs_, &recv_parts_);
  return moved || s || r;
}

int RailLink::PollFd() const {
  for (size_t k = 0; k < rails_.size(); ++k) {
    const int fd = rails_[k]->PollFd();
    if (fd < 0) return -1;  // this rail must be polled by hand now, so the link must
    const uint32_t want =
        (rails_[k]->WantsRead() ? EPOLLIN : 0u) | (rails_[k]->WantsWrite() ? EPOLLOUT : 0u);
    if (fd == registered_fd_[k] && want == armed_[k]) continue;
    epoll_event ev{};
    ev.events = want;
    ev.data.u32 = static_cast<uint32_t>(k);
    int op = EPOLL_CTL_MOD;
    if (fd != registered_fd_[k]) {
      if (registered_fd_[k] >= 0) ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, registered_fd_[k], nullptr);
      registered_fd_[k] = -1;
      op = EPOLL_CTL_ADD;
    }
    // A failure leaves the old interest (or none): the executor's poll is bounded, so
    // the worst case is a wake-up too many or a late one, never a hang.
    if (::epoll_ctl(epoll_fd_.get(), op, fd, &ev) == 0) {
      registered_fd_[k] = fd;
      armed_[k] = want;
    }
  }
  return epoll_fd_.get();
}

void RailLink::Shutdown() {
  for (auto& rail : rails_) rail->Shutdown();
}

void RailLink::SendAbort(const Status& cause) {
  for (auto& rail : rails_) rail->SendAbort(cause);
}

}  // namespace weft::transport
