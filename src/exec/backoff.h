// How a rank waits for links that have nothing to deliver yet: spin briefly (small
// messages arrive within microseconds), then yield the core, then sleep — in poll(2)
// when every busy link has a file descriptor, on the links' wake words (futex) when
// every busy link has one (shm), otherwise for a fraction of a millisecond. Oversubscribed runs (more ranks
// than cores) depend on the yield and sleep phases to let the awaited peer run, so
// there the spin phase is cut to a few polls (measured: docs/BENCHMARKS.md).
#pragma once

#include <vector>

#include <poll.h>

#include "core/deadline.h"
#include "core/futex.h"
#include "transport/link.h"
#include "transport/mesh.h"

namespace weft::exec {

class Backoff {
 public:
  // oversubscribed: more ranks on this host than cores this process may run on. The peer
  // this rank waits for may then be waiting for this very core, so spinning only delays
  // it: such ranks yield after a few polls instead of a few hundred.
  explicit Backoff(bool oversubscribed = false);
  ~Backoff() { Disarm(); }
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;
  // Called when a pass moved something.
  void Reset() {
    idle_ = 0;
    if (!armed_.empty()) Disarm();
  }
  // Called after a pass over `links` moved nothing. Returns without waiting past
  // `deadline`, and sleeps in poll(2) for at most `max_poll_ms`. The busy ones of `links`
  // are waited on, and every one of `watch`: links with nothing posted whose next
  // message the caller waits to look at (Link::PeekHeader).
  void Idle(const std::vector<transport::Link*>& links, const Deadline& deadline,
            int max_poll_ms = 100, const std::vector<transport::Link*>* watch = nullptr) {
    if (!IdleBriefly()) Sleep(links, deadline, max_poll_ms, watch);
  }
  // Idle() in two parts, for callers whose deadline costs something to compute: the
  // spin and yield phases (true: this pass was handled), then the sleep phase.
  bool IdleBriefly();
  void Sleep(const std::vector<transport::Link*>& links, const Deadline& deadline,
             int max_poll_ms = 100, const std::vector<transport::Link*>* watch = nullptr);
  // True every so often while idle (not on the first fruitless pass: a short wait never
  // reads the clock), when the caller should check its deadlines.
  bool TimeToCheck() const { return idle_ != 0 && (idle_ & 63) == 0; }

 private:
  // Sleep phase with wake words: the first fruitless pass arms them (so the caller's
  // next pass sees any progress made before the peers could know to ring), the next one
  // sleeps. False: some awaited link has no wake word.
  bool ArmWakes(const std::vector<transport::Link*>& awaited);
  // The links to wait on: the busy ones of `links`, and `watch`.
  const std::vector<transport::Link*>& Awaited(const std::vector<transport::Link*>& links,
                                               const std::vector<transport::Link*>* watch);
  void Disarm();

  int spin_polls_;
  int idle_ = 0;
  std::vector<pollfd> pollfds_;
  std::vector<transport::Link*> armed_;
  std::vector<FutexWait> waits_;
  std::vector<transport::Link*> awaited_;
};

// True if the mesh's ranks on this rank's host cannot each have a core: more of them
// than CPUs in this process's affinity mask. False when hosts are unknown.
bool Oversubscribed(const transport::Mesh& mesh);

}  // namespace weft::exec
