// The algorithm registry: every algorithm, by name, with a one-line description, for
// the planner, WEFT_ALGO and `weft-bench --list-algos`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace weft::sched {

struct Algorithm {
  const char* name;         // "ring", "recursive_doubling", "binomial", "bruck", ...
  Collective coll;
  const char* description;
  // True when the algorithm can build a schedule for this spec (e.g. some need a
  // power-of-two world size).
  bool (*supports)(const CollectiveSpec& spec);
  Schedule (*build)(const CollectiveSpec& spec);
};

// All registered algorithms, in a stable order.
const std::vector<Algorithm>& AllAlgorithms();
const Algorithm* FindAlgorithm(Collective coll, std::string_view name);

}  // namespace weft::sched
