// What a communicator's calls would cost, without running them (weftGroupSimulateEnd,
// NCCL's ncclGroupSimulateEnd): for each collective, the algorithm the planner would
// choose and that algorithm's estimate under the communicator's cost model
// (sched/cost_model.h: WEFT_COST_MODEL, else the link figures detected when it
// connected), the numbers the planner weighs algorithms with.
//
// The collectives of a group run one after another on a communicator, so their times
// add up; its sends and receives progress together, so they are costed as one step of
// all their messages, each at the size of the largest. Buffers are taken as plain host
// memory: the registered single-pass algorithms and the GPU direct path are not modelled.
//
// Immutable after construction: any thread.
#pragma once

#include <memory>
#include <vector>

#include "comm/call.h"
#include "core/status.h"
#include "sched/planner.h"
#include "sched/schedule.h"

namespace weft::comm {

class CallEstimator {
 public:
  CallEstimator(int rank, int size, sched::Planner planner,
                std::shared_ptr<const sched::Topology> topology)
      : rank_(rank), size_(size), planner_(std::move(planner)), topology_(std::move(topology)) {}

  // Microseconds for `calls` (checked already, Communicator::CheckForGroup), in order.
  // InvalidArgument for a call the model cannot cost (a receive from any source).
  Result<double> EstimateUs(const std::vector<Call>& calls) const;

 private:
  Result<double> CollectiveUs(const Call& call) const;

  const int rank_;
  const int size_;
  const sched::Planner planner_;
  const std::shared_ptr<const sched::Topology> topology_;
};

}  // namespace weft::comm
