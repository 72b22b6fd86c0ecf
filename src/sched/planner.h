// The planner: picks the algorithm for a call from the collective, the element count
// in bytes and the world size. WEFT_ALGO overrides it:
//   WEFT_ALGO=ring                       every collective that has "ring" uses it
//   WEFT_ALGO=allreduce:ring,broadcast:binomial   per collective
// An unknown name is an InvalidArgument error that lists the valid names.
#pragma once

#include <string>

#include "core/status.h"
#include "sched/registry.h"

namespace weft::sched {

struct PlanRequest {
  CollectiveSpec spec;
  size_t elem_size = 1;
};

class Planner {
 public:
  // Parses `algo_override` (the WEFT_ALGO syntax above; empty: no override).
  static Result<Planner> Create(const std::string& algo_override);
  // The algorithm to run. Never null for a valid spec.
  Result<const Algorithm*> Choose(const PlanRequest& request) const;

 private:
  // override_[coll] == nullptr: planner decides.
  std::string override_by_coll_[kNumCollectives];
};

}  // namespace weft::sched
