// A Link to a peer over several links of one transport, one per rail (stripes.h): tcp
// connections over several interfaces (tcp/rails.h), or ofi links over endpoints on
// several NICs. Each message below the stripe minimum goes whole on rail 0; a larger one
// is cut into one stripe per rail, each posted to that rail's link as a message of its
// own (the message's header with `bytes` = the stripe's length, the payload pointer at
// the stripe's offset), so every stripe is checked on arrival and lands straight in
// place. Each rail keeps its own FIFO order; the receiver cuts alike, so rail k's n-th
// stripe is always the one its n-th posted receive part expects. Ops complete in FIFO
// order, each when all its stripes have.
//
// An error on any rail fails the whole link, with the rail named. Abort frames and
// shutdown go to every rail.
//
// PollFd() is an epoll descriptor over the rails' own PollFd()s: readable when a rail
// that wants reading has something (WantsRead), or one with pending sends has room
// (WantsWrite). It is (re)armed in PollFd() itself (called only when the executor is
// about to sleep), so the fast path makes no epoll calls; when a rail offers no fd at
// that moment, neither does the RailLink (the executor polls by hand).
//
// Never blocks. Thread-safety: one thread at a time per link.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "net/socket.h"
#include "transport/link.h"
#include "transport/stripes.h"

namespace weft::transport {

class RailLink final : public Link {
 public:
  // `rails`: links of one transport to the same peer, rail 0 first (at least 2, at most
  // kMaxRails). Both ends must pass the same `stripe_min`.
  static Result<std::unique_ptr<RailLink>> Create(int self, int peer,
                                                  std::vector<std::unique_ptr<Link>> rails,
                                                  uint64_t stripe_min);
  ~RailLink() override;

  void PostSend(SendOp* op) override;
  void PostRecv(RecvOp* op) override;
  Result<bool> Progress() override;
  bool Busy() const override { return !sends_.empty() || !recvs_.empty(); }
  int PollFd() const override;
  void Shutdown() override;
  void SendAbort(const Status& cause) override;
  const char* Name() const override { return rails_[0]->Name(); }

  int rails() const { return static_cast<int>(rails_.size()); }

  // A posted op and how many stripes it was cut into.
  template <typename Op>
  struct Pending {
    Op* op;
    int parts;  // its stripes: the next `parts` entries of the parts deque
  };

 private:
  RailLink(int self, int peer, std::vector<std::unique_ptr<Link>> rails, uint64_t stripe_min,
           net::Fd epoll_fd);

  net::Fd epoll_fd_;
  std::vector<std::unique_ptr<Link>> rails_;
  uint64_t stripe_min_;
  // Each rail's fd in epoll_fd_ (-1: none yet) and what it is registered for there
  // (EPOLLIN / EPOLLOUT bits).
  mutable std::vector<int> registered_fd_;
  mutable std::vector<uint32_t> armed_;

  // Parts live in deques: push_back and pop_front leave the others where they are, and
  // the rails hold pointers to them.
  std::deque<Pending<SendOp>> sends_;
  std::deque<SendOp> send_parts_;
  std::deque<Pending<RecvOp>> recvs_;
  std::deque<RecvOp> recv_parts_;

  Status failed_;
};

}  // namespace weft::transport
