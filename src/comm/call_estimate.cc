#include "comm/call_estimate.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sched/cost_model.h"

namespace weft::comm {

Result<double> CallEstimator::CollectiveUs(const Call& call) const {
  sched::CollectiveSpec spec = SpecOf(call, rank_, size_);
  spec.topology = topology_;
  const size_t esize = DataTypeSize(call.dtype);
  WEFT_ASSIGN_OR_RETURN(sched::PlanChoice choice, planner_.Explain({spec, esize}));
  const double us =
      sched::EstimateUs(*choice.algorithm, choice.Planned(spec), esize, planner_.costs());
  if (us < 0) {
    return Internal(fmt::format("rank {}: {}: the cost model has no estimate for {}", rank_,
                                CallName(call), choice.algorithm->name));
  }
  return us;
}

Result<double> CallEstimator::EstimateUs(const std::vector<Call>& calls) const {
  double us = 0;
  std::vector<std::pair<int, int>> messages;  // (from, to) of the sends and receives
  double largest = 0;
  for (const Call& call : calls) {
    if (call.kind == CallKind::kCollective) {
      WEFT_ASSIGN_OR_RETURN(double one, CollectiveUs(call));
      us += one;
      continue;
    }
    if (IsAnySource(call)) {
      return InvalidArgument(fmt::format(
          "rank {}: recv from any source: its time cannot be estimated (the peer is chosen "
          "when a message arrives); name the peer",
          rank_));
    }
    messages.emplace_back(call.kind == CallKind::kSend ? std::make_pair(rank_, call.peer)
                                                       : std::make_pair(call.peer, rank_));
    largest = std::max(largest, static_cast<double>(call.count * DataTypeSize(call.dtype)));
  }
  if (!messages.empty()) us += sched::MessagesUs(*topology_, messages, largest, planner_.costs());
  return us;
}

}  // namespace weft::comm
