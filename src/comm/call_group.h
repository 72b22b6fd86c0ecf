// weftGroupStart / weftGroupEnd, NCCL's group calls. Between them a blocking call (on
// host buffers, on device buffers or on a stream) is checked and returns at once; the
// outermost weftGroupEnd issues the group's calls in the order they were made and waits
// for them. So a rank may post its sends before its receives, to any peers and on
// several communicators, without deadlocking on a peer that does the same: the sends
// and receives progress together (exec/p2p_engine.h), and the collectives run in each
// communicator's order.
//
// On a stream the group's calls share one place (comm/device_calls.h, StreamShare): the
// stream waits once for all of them, so none waits behind another. As in NCCL, they are
// put on the stream at weftGroupEnd: work queued on it between a call and the end runs
// before them. weftGroupEnd waits for them unless the stream does
// (WEFT_CUDA_STREAM_WAIT=memop). Non-blocking calls (weftI*) are issued at once, inside
// a group or not. SimulateEnd ends a group without issuing its calls, and says what they
// would take (comm/call_estimate.h).
//
// Thread-safety: a group belongs to the thread that opened it (thread-local state).
#pragma once

#include <memory>
#include <vector>

#include "comm/call.h"
#include "comm/communicator.h"
#include "core/status.h"

namespace weft::comm {

class CallGroup {
 public:
  // This thread's group state.
  static CallGroup& ThisThread();

  // Whether a group is open on this thread: blocking calls are to be deferred.
  bool open() const { return depth_ > 0; }
  // Opens a group, or a nested one inside it (only the outermost end issues and waits).
  void Start() { ++depth_; }
  // A call made inside the group, checked by Communicator::CheckForGroup. `stream`: the
  // stream it is ordered on (nullptr: none, or the default stream for device buffers).
  void Defer(std::shared_ptr<Communicator> comm, const Call& call, void* stream);

  struct Failure {
    Status status;
    std::shared_ptr<Communicator> comm;  // the failed call's (null: no group was open)
  };
  // Closes the innermost group. At the outermost, issues every deferred call in the
  // order made, and waits for each, in that order, even after one fails (their buffers
  // are the caller's again only once all are done); returns the first failure. A call
  // that cannot be issued does not stop the others, which its peers may be waiting for.
  // Each wait is bounded by its call's timeout on the communicator's worker.
  // InvalidUsage if no group is open.
  Failure End();
  // Closes the outermost group as End does, but issues none of its calls: *us is set to
  // the time they would take (Communicator::EstimateUs, summed over the communicators).
  // InvalidUsage if no group is open or it is nested (the inner group's calls stay for
  // the outer one's end).
  Failure SimulateEnd(double* us);

 private:
  struct Deferred {
    std::shared_ptr<Communicator> comm;
    Call call;
    void* stream;
  };
  int depth_ = 0;
  std::vector<Deferred> deferred_;
};

}  // namespace weft::comm
