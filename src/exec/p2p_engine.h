// Point-to-point operations in flight. Unlike a collective, a send or receive does not
// hold the communicator until it completes: any number are posted at once and progress
// together, so a ring of non-blocking sends and receives cannot deadlock whatever the
// order in which ranks post them.
//
// Receives match messages by sender and tag, as MPI's and Gloo's do, on links that can
// show the next message before it is taken (tcp with one rail, shm: Link::CanPeek). A
// message goes to the first receive posted, still waiting, that names its sender (or
// any source) and its tag. A message that no receive names yet is taken into memory of
// the engine's (an unexpected message, up to kUnexpectedBytes in all) and handed to the
// first receive that names it later; past that bound it stays in the link until one
// does. So messages with one tag from one peer arrive in the order they were sent, and
// those with different tags in the order they are asked for. On the other links (ofi,
// several rails) receives go to the link in the order posted, and one that names
// another tag than the next message's fails with InvalidUsage.
//
// Receives are numbered here per peer as they are given a message, which is the order
// the peer sent them in: the number checks that no message was lost or repeated.
//
// Thread-safety: none; the communicator's worker owns it (or the thread running a
// blocking receive while the worker is idle, holding the same lock).
#pragma once

#include <functional>
#include <list>
#include <optional>
#include <string>
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
  // Posts a receive from `peer`, or from kAnySource, matched as above; *source is set
  // to the sender before `done` runs. A receive from any source needs a link to every
  // peer that can look ahead; otherwise `done` gets InvalidArgument, at once (from here).
  void PostRecv(int peer, uint32_t tag, DataType dtype, void* data, size_t bytes,
                const Deadline& deadline, Done done, int* source = nullptr);
  // Bytes of unexpected messages the engine holds at most (above).
  static constexpr uint64_t kUnexpectedBytes = 64ull << 20;

  // No op in flight or waiting. Unexpected messages held whole do not count: they need
  // no progress, and wait for their receives across collectives.
  bool Empty() const { return ops_.empty() && waiting_.empty() && landing_ == 0; }

  // One pass: matches waiting receives with messages, progresses every busy link, and
  // completes finished ops. Returns whether anything moved. On a link error or an
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
  // A message taken before any receive named it: its header (recv.expect) and bytes.
  struct Unexpected {
    int peer;
    std::vector<std::byte> bytes;
    transport::RecvOp recv;  // posted to the link; done once every byte has landed
    bool landed = false;
    bool bound = false;  // promised to a waiting receive (Waiting::bound)
  };
  // A receive not yet given a message.
  struct Waiting {
    int peer;  // or kAnySource
    uint32_t tag;
    DataType dtype;
    void* data;
    size_t bytes;
    Deadline deadline;
    Done done;
    int* source;
    Unexpected* bound = nullptr;  // the held message it takes once that has landed
  };
  transport::WireHeader Header(uint64_t seq, uint32_t tag, DataType dtype, size_t bytes) const;
  // The number of the next message taken from `peer`.
  uint64_t TakeRecvSeq(int peer) { return recv_seq_[peer]++; }
  void Track(transport::Link* link);
  void PostToLink(int peer, Waiting w);
  static bool Names(const Waiting& w, int peer, uint32_t tag) {
    return (w.peer == peer || w.peer == kAnySource) && w.tag == tag;
  }
  // Gives waiting receives the messages they can take now: held ones first, then those
  // that have arrived at the links. Returns whether anything moved.
  Result<bool> Match();
  // Hands held messages to the receives bound to them, once landed.
  Result<bool> DeliverHeld();
  // Looks at the next message from each peer a waiting receive may take one from.
  Result<bool> MatchArrived();
  // The peers whose next message a waiting receive may take: by peer, whether one names
  // it (or any source does) and has no held message promised.
  void PeersWanted();
  // Why a receive from any source cannot run here, or Ok.
  Status AnySourceRefusal() const;
  // For a timed-out receive from `peer`: what that peer sent meanwhile that no receive
  // took (held messages, and the next one at the link).
  std::string NotTakenFrom(int peer) const;

  transport::Mesh* mesh_;
  std::vector<uint64_t> recv_seq_;  // by peer: the number of the next receive posted
  std::vector<int> link_recvs_;     // by peer: receives at its link, not yet done
  std::list<Op> ops_;  // stable addresses: links hold pointers to send/recv
  std::list<Op> failed_;
  std::list<Unexpected> unexpected_;  // in the order they arrived; stable addresses
  uint64_t unexpected_bytes_ = 0;
  int landing_ = 0;  // unexpected messages whose bytes are still arriving
  // By peer: the header of its next message when it did not fit in kUnexpectedBytes.
  std::vector<std::optional<transport::WireHeader>> left_at_link_;
  std::list<Waiting> waiting_;  // in the order posted
  std::vector<char> wanted_;    // by peer, from PeersWanted
  // By peer: its next message (or its end) was there at the last look and could not be
  // taken then: not watched while idle (MatchArrived looks again each pass).
  std::vector<char> parked_;
  std::vector<transport::Link*> watch_;  // links whose next message a receive waits for
  int next_source_ = 0;                  // where MatchArrived starts looking: each peer in turn
  std::vector<transport::Link*> links_;  // links with ops posted
  Backoff backoff_;
  static constexpr uint32_t kDeadlineCheckEvery = 64;
  uint32_t passes_ = 0;
};

}  // namespace weft::exec
