// weftGroupStart / weftGroupEnd, NCCL's group calls for a host library: between them, a
// blocking call on this thread is issued as a non-blocking one and returns at once, and
// the outermost weftGroupEnd waits for all of them. So a rank may post its sends before
// its receives, to any peers and on several communicators, without deadlocking on a
// peer that does the same; the sends and receives progress together (exec/p2p_engine.h)
// and the collectives run in each communicator's order.
//
// Thread-safety: a group belongs to the thread that opened it (thread-local state).
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "comm/request.h"
#include "core/status.h"

namespace weft::comm {

class CallGroup {
 public:
  // This thread's group state.
  static CallGroup& ThisThread();

  // Whether a group is open on this thread: blocking calls are to be deferred.
  bool open() const { return depth_ > 0; }
  // Opens a group, or a nested one inside it (only the outermost end waits).
  void Start() { ++depth_; }
  // A call issued inside the group, to be waited for at its end.
  void Defer(std::shared_ptr<Communicator> comm, std::shared_ptr<Request> request);

  struct Failure {
    Status status;
    std::shared_ptr<Communicator> comm;  // the failed call's (null: no group was open)
  };
  // Closes the innermost group. At the outermost, waits for every deferred call, in the
  // order issued, even after one fails (their buffers are the caller's again only once
  // all are done), and returns the first failure. Each wait is bounded by its call's
  // timeout on the communicator's worker. InvalidUsage if no group is open.
  Failure End();

 private:
  struct Deferred {
    std::shared_ptr<Communicator> comm;
    std::shared_ptr<Request> request;
  };
  int depth_ = 0;
  std::vector<Deferred> deferred_;
};

}  // namespace weft::comm
