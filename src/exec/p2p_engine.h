// Point-to-point operations in flight. Unlike a collective, a send or receive does not
// hold the communicator until it completes: any number are posted at once and progress
// together, so a ring of non-blocking sends and receives cannot deadlock whatever the
// order in which ranks post them.
//
// Receives are numbered here, in the order they are posted, per peer: a receive from
// any source takes the number of the peer it chooses only when it chooses, and the
// receives posted after it wait until then (a message it could take is its own first,
// as in MPI), so each peer's messages are still taken in the order they were sent.
//
// Thread-safety: none; the communicator's worker owns it.
#pragma once

#include <deque>
#include <functional>
#include <list>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "core/types.h"
#include "exec/backoff.h"
#include "transport/mesh.h"

namespace weft::exec {

// The peer of a receive from any source (the same value as comm::kAnySource).
inline constexpr int kAnySource = -2;

class P2PEngine {
 public:
  using Done = std::function<void(Status)>;

  explicit P2PEngine(transport::Mesh* mesh);

  // Posts a send of `bytes` from `data` to `peer` (seq: the call's number between this
  // ordered pair; tag: the caller's, which the receive must name). `done` runs exactly
  // once, from Poll() or FailAll().
  void PostSend(int peer, uint64_t seq, uint32_t tag, DataType dtype, const void* data,
                size_t bytes, const Deadline& deadline, Done done);
  // Posts a receive from `peer`, or from kAnySource: then the first peer whose next
  // message is a send arrived here (looked at without taking it, Link::PeekHeader), and
  // *source is set to it before `done` runs. A receive from any source needs a link to
  // every peer that can look ahead (tcp, shm); otherwise `done` gets InvalidArgument,
  // at once (from here).
  void PostRecv(int peer, uint32_t tag, DataType dtype, void* data, size_t bytes,
                const Deadline& deadline, Done done, int* source = nullptr);
  // The number of the next receive from `peer`, for a receive run outside the engine
  // (the executor's blocking path), which may only run while the engine is Empty().
  uint64_t TakeRecvSeq(int peer) { return recv_seq_[peer]++; }

  bool Empty() const { return ops_.empty() && waiting_.empty(); }

  // One pass: progresses every busy link, chooses peers for receives from any source,
  // and completes finished ops. Returns whether anything moved. On a link error or an
  // expired deadline, returns the error (the caller fails the communicator and calls
  // FailAll).
  Result<bool> Poll();
  // Waits a little when a pass moved nothing (see Backoff).
  void Idle();
  // Completes every op still in flight or waiting with `status`. The ops' memory is kept
  // until the engine is destroyed: a link may still hold pointers to them. Leaves no
  // link armed, so the mesh may be destroyed before the engine.
  void FailAll(const Status& status);

 private:
  struct Op {
    bool is_send;
    int peer;
    Deadline deadline;
    Done done;
    transport::SendOp send;
    transport::RecvOp recv;
  };
  // A receive not yet posted to a link: from any source, or behind one.
  struct Waiting {
    int peer;  // or kAnySource
    uint32_t tag;
    DataType dtype;
    void* data;
    size_t bytes;
    Deadline deadline;
    Done done;
    int* source;
  };
  transport::WireHeader Header(uint64_t seq, uint32_t tag, DataType dtype, size_t bytes) const;
  void Track(transport::Link* link);
  void PostToLink(int peer, Waiting w);
  // Posts the waiting receives that may go now. Returns whether any did.
  Result<bool> AdmitWaiting();
  // The peer whose next message, arrived here, a receive from any source takes; -1 while
  // none has come. Peers that closed their end are passed over; Unavailable once every
  // peer has, and a failed peer's error as it is.
  Result<int> ChooseSource();
  // Why a receive from any source cannot run here, or Ok.
  Status AnySourceRefusal() const;

  transport::Mesh* mesh_;
  std::vector<uint64_t> recv_seq_;  // by peer: the number of the next receive posted
  std::list<Op> ops_;  // stable addresses: links hold pointers to send/recv
  std::list<Op> failed_;
  std::deque<Waiting> waiting_;          // in the order posted; the front is from any source
  int next_source_ = 0;                  // where ChooseSource starts looking: each peer in turn
  std::vector<transport::Link*> links_;  // links with ops posted
  Backoff backoff_;
  static constexpr uint32_t kDeadlineCheckEvery = 64;
  uint32_t passes_ = 0;
};

}  // namespace weft::exec
