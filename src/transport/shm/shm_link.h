// A Link to a peer on the same host through a shared-memory segment (see segment.h):
// each message is its 32-byte WireHeader followed by the payload, streamed through the
// ring of that direction in pieces as space frees up, so messages of any size pass
// through rings of a fixed size.
//
// Progress copies as much as both rings allow and never blocks. There is no file
// descriptor to poll (PollFd() == -1): the executor must call Progress() to notice new
// bytes. A peer that destroyed its link is reported at once; a peer process that died is
// noticed after ~100 ms without progress (kill(pid, 0) == ESRCH, or a zombie).
//
// Thread-safety: one thread at a time per link.
#pragma once

#include <chrono>
#include <deque>
#include <memory>

#include "transport/link.h"
#include "transport/shm/segment.h"

namespace weft::transport::shm {

class ShmLink final : public Link {
 public:
  ShmLink(int self, int peer, std::unique_ptr<Segment> segment);
  ~ShmLink() override = default;

  void PostSend(SendOp* op) override { sends_.push_back(op); }
  void PostRecv(RecvOp* op) override { recvs_.push_back(op); }
  Result<bool> Progress() override;
  bool Busy() const override { return !sends_.empty() || !recvs_.empty(); }
  const char* Name() const override { return "shm"; }

  // How long without progress before checking whether the peer process is alive.
  static constexpr std::chrono::milliseconds kLivenessInterval{100};

 private:
  bool ProgressSends();
  Result<bool> ProgressRecvs();
  // Called when nothing moved: fails if the peer closed its end or its process died.
  Status CheckPeer();

  std::unique_ptr<Segment> segment_;
  Ring out_;
  Ring in_;

  std::deque<SendOp*> sends_;
  uint64_t send_off_ = 0;  // bytes of the front send (header + payload) already written

  std::deque<RecvOp*> recvs_;
  WireHeader in_header_;
  uint64_t in_header_off_ = 0;  // bytes of in_header_ read so far
  uint64_t recv_off_ = 0;       // payload bytes of the front recv read so far

  Status failed_;
  bool idle_ = false;  // true while Progress calls move nothing; idle_since_ is valid
  std::chrono::steady_clock::time_point idle_since_;
};

}  // namespace weft::transport::shm
