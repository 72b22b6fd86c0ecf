// The event engine: runs per-rank schedules (sched/schedule.h) against the cluster
// model, with the executor's semantics:
//   - a rank posts the sends and receives of its current round in their order in the
//     round: its first send and first receive at once, every further message o =
//     ClusterSpec::message_overhead_s() after the one before (the CPU handles messages
//     one at a time: LogP's per-message overhead, charged where the planner's cost model
//     charges it). The overhead delays when a message can start, not its transfer, so it
//     overlaps the transfers already under way: a root whose link is busy draining
//     earlier messages hides it, a root of small messages pays all of it. A round of one
//     send and one receive pays none;
//   - a message starts moving when both its send and its matching receive are posted
//     (rendezvous: the data lands in the receiver's buffer), pays the route's latency
//     alpha, then drains at its max-min fair share of every resource on its route;
//   - the round's messages all complete -> its local steps run, one after the other, on
//     the rank's accelerator: reduce_s_per_byte per reduced byte, copy_s_per_byte per
//     copied byte -> the next round starts;
//   - messages between a pair of ranks match in FIFO order.
// Every rank starts at time 0; the collective's time is when the last rank finishes.
//
// With a non-trivial Symmetry only the representatives' schedules run (see
// sim/symmetry.h for why that is exact): a message to rank b is matched against the
// receive posted by Rep(b), seen through the group element that maps Rep(b) to b, and
// resources are merged into their classes under the group.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"
#include "sim/cluster.h"
#include "sim/symmetry.h"

namespace weft::sim {

struct EngineInput {
  const ClusterSpec* cluster = nullptr;
  const Symmetry* symmetry = nullptr;
  // schedules[i] is representative rank i's (i < symmetry->reps()).
  const std::vector<sched::Schedule>* schedules = nullptr;
  size_t elem_size = 1;
};

struct EngineResult {
  double seconds = 0;     // when the last rank finishes
  double first_done = 0;  // when the first rank finishes
  uint64_t messages = 0;  // messages simulated (representatives' sends)
  uint64_t batches = 0;   // distinct event times processed
};

// Errors: InvalidArgument for inconsistent inputs; Internal for schedule bugs the
// executor would also trip on (a send and its receive of different sizes, deadlock,
// messages left unmatched), naming the ranks and rounds involved.
Result<EngineResult> RunEngine(const EngineInput& input);

}  // namespace weft::sim
