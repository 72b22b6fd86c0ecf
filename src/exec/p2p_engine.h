// Point-to-point operations in flight. Unlike a collective, a send or receive does not
// hold the communicator until it completes: any number are posted at once and progress
// together, so a ring of non-blocking sends and receives cannot deadlock whatever the
// order in which ranks post them.
//
// Thread-safety: none; the communicator's worker owns it.
#pragma once

#include <functional>
#include <list>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "core/types.h"
#include "exec/backoff.h"
#include "transport/mesh.h"

namespace weft::exec {

class P2PEngine {
 public:
  using Done = std::function<void(Status)>;

  explicit P2PEngine(transport::Mesh* mesh) : mesh_(mesh), backoff_(Oversubscribed(*mesh)) {}

  // Posts a send of `bytes` from `data` to `peer` (seq: the call's number between this
  // ordered pair). `done` runs exactly once, from Poll() or FailAll().
  void PostSend(int peer, uint64_t seq, DataType dtype, const void* data, size_t bytes,
                const Deadline& deadline, Done done);
  void PostRecv(int peer, uint64_t seq, DataType dtype, void* data, size_t bytes,
                const Deadline& deadline, Done done);

  bool Empty() const { return ops_.empty(); }

  // One pass: progresses every busy link and completes finished ops. Returns whether
  // anything moved. On a link error or an expired deadline, returns the error (the
  // caller fails the communicator and calls FailAll).
  Result<bool> Poll();
  // Waits a little when a pass moved nothing (see Backoff).
  void Idle();
  // Completes every op still in flight with `status`. The ops' memory is kept until the
  // engine is destroyed: a link may still hold pointers to them. Leaves no link armed,
  // so the mesh may be destroyed before the engine.
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
  transport::WireHeader Header(uint64_t seq, DataType dtype, size_t bytes) const;
  void Track(transport::Link* link);

  transport::Mesh* mesh_;
  std::list<Op> ops_;  // stable addresses: links hold pointers to send/recv
  std::list<Op> failed_;
  std::vector<transport::Link*> links_;  // links with ops posted
  Backoff backoff_;
  static constexpr uint32_t kDeadlineCheckEvery = 64;
  uint32_t passes_ = 0;
};

}  // namespace weft::exec
