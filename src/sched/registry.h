// The algorithm registry: every algorithm, by name, with a one-line description, its
// schedule builder and its cost estimate, for the planner, WEFT_ALGO and `weft-bench
// --list-algos`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "sched/cost_model.h"
#include "sched/schedule.h"

namespace weft::sched {

// How much cheaper in the cost model an algorithm must be than every other candidate
// before the planner picks it (as a fraction: 0.1 is 10%), and why, for the planner's
// explanation: the model's blind spots that the measurements behind the other choices
// do see.
struct Margin {
  double fraction = 0;
  const char* why = "";
};

struct Algorithm {
  const char* name;         // "ring", "recursive_doubling", "binomial", "bruck", ...
  Collective coll;
  const char* description;
  // True when the algorithm can build a schedule for this spec (e.g. some need a
  // power-of-two world size).
  bool (*supports)(const CollectiveSpec& spec);
  Schedule (*build)(const CollectiveSpec& spec);
  // The cost model's time for a call it supports, in microseconds (cost_model.h), taken
  // over the steps `build` lays out. Defined next to `build`, so that whoever changes
  // one sees the other; tests/unit/sched/estimate_schedule_test.cc holds them together
  // and says where the estimate approximates. Call it through EstimateUs, which answers
  // for a world of one and for a spec without a topology.
  double (*estimate_us)(const CostQuery& query, const CostModel& costs) = nullptr;
  // The margin the planner requires of it (see Margin) under these figures; null: none.
  Margin (*margin)(const CostModel& costs) = nullptr;
  // The pipelined algorithms: how many segments to cut the call into under these figures
  // (the count estimate_us is the time of); the planner puts it in
  // CollectiveSpec::segments. Null: the algorithm does not pipeline.
  int (*segments)(const CostQuery& query, const CostModel& costs) = nullptr;
};

// All registered algorithms, in a stable order.
const std::vector<Algorithm>& AllAlgorithms();
const Algorithm* FindAlgorithm(Collective coll, std::string_view name);

}  // namespace weft::sched
