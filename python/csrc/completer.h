// Completes weft requests in the background and then the torch Work objects they belong
// to, so that the thread that issued an operation is never the one that drives it.
//
// Why a thread of our own: weftWait/weftTest free the request, so exactly one thread
// must own completion; and a Work's Future has to complete even when nobody calls
// wait() (DDP waits on the Future from inside autograd).
//
// Order: weft runs collectives in issue order, and a collective starts only after every
// send/receive issued before it has finished. So a collective at the head of the queue
// can be waited on with a blocking weftWait. Sends and receives progress concurrently and
// may finish in any order; when they are at the head, every one of them up to the next
// collective is polled with weftTest, so a user who waits on a later send is not held up
// by an earlier receive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <torch/csrc/distributed/c10d/Work.hpp>
#include <weft/weft.h>

#include "work.h"

namespace weft_torch {

struct PendingOp {
  c10::intrusive_ptr<WeftWork> work;
  std::vector<weftRequest_t> requests;  // not yet complete
  // Copies results into the caller's tensors (non-contiguous outputs, lists of outputs)
  // once every request succeeded; runs on the completer thread.
  std::function<void()> on_success;
  std::vector<at::Tensor> keep_alive;  // buffers weft reads or writes until completion
  std::string error;                   // the first failure, issuing or completing
  bool point_to_point = false;         // completes out of order (see above)
  const char* name = "operation";      // for error messages: "weft <name> failed: ..."
  uint64_t seq = 0;                    // the group's collectives issued before it
  std::chrono::steady_clock::time_point issued;  // for the completion hook
};

// torch's completion hook (registerOnCompletionHook): told of each op once it completed.
using OnCompletionHook = std::function<void(std::shared_ptr<c10d::WorkInfo>)>;

class Completer {
 public:
  explicit Completer(weftComm_t comm);
  ~Completer();

  // The caller must push in the order it issued the requests to weft.
  void Push(PendingOp op);
  // Waits for every pushed operation to complete, then stops the thread. Idempotent.
  void Drain();
  // Waits until every operation pushed so far has completed (its Work included); the
  // thread goes on. Bounded as the operations are (WEFT_TIMEOUT, or an Abort).
  void WaitPending();
  // Called on this thread after each later operation's Work completed, with its type,
  // seq, issue and completion times (activeDuration: issue to completion). Once.
  void SetCompletionHook(OnCompletionHook hook);
  // Called on this thread when an operation fails for the first time (once).
  void SetFirstFailure(std::function<void()> fn);
  // Called on this thread with the completion key of each later operation whose Work
  // completed successfully (a failed one is not reported), after the hook above.
  void SetSuccessListener(std::function<void(uint64_t completion_key)> fn);
  // weftCommAbort on the communicator, from any thread: every pending request fails
  // (weft: within about 100 ms) and its Work with it. The communicator is freed.
  void Abort();

 private:
  void Loop();
  void WaitOrdered(PendingOp& op);
  // Tests the point-to-point run at the head of the queue; moves finished ones to `done`.
  void TestPointToPoint(std::vector<PendingOp>& done);  // requires mu_
  void Finish(PendingOp& op);
  // An error message for a failed request; safe against a concurrent Abort.
  std::string Describe(const char* name, weftResult_t r);

  std::mutex comm_mu_;  // comm_ against Abort freeing it while an error is described
  weftComm_t comm_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<PendingOp> queue_;
  uint64_t pushed_ = 0;    // (mu_)
  uint64_t finished_ = 0;  // (mu_)
  OnCompletionHook hook_;    // (mu_; read by the thread when it finishes an op)
  std::function<void()> first_failure_;  // (mu_), cleared once called
  std::function<void(uint64_t)> on_success_;  // (mu_)
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace weft_torch
