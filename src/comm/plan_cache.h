// What a communicator remembers between calls about how to run them: the planner's
// choice per (collective, root, size), the schedules built, and the last collective
// planned in full (comm/prepared_call.h), so that a loop repeating one call skips the
// planner, the validation and the buffer set-up.
//
// Not thread-safe: the communicator uses it under its execution lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "comm/call.h"
#include "comm/prepared_call.h"
#include "core/status.h"
#include "sched/planner.h"
#include "sched/registry.h"
#include "sched/schedule.h"

namespace weft::comm {

// How a call's buffers stand, as the ranks agreed (comm/registered_path.h): plain, or
// registered and mapped on every rank, with some rank's call in place or none.
enum class BufferMode : uint8_t { kPlain, kRegistered, kRegisteredOutOfPlace };

class PlanCache {
 public:
  PlanCache(int rank, int size, sched::Planner planner,
            std::shared_ptr<const sched::Topology> topology);

  // The plan for collective `call` (validated); `kind` is its wire kind (0: the user's
  // call, else the library's own: the call check, the device path's synchronisation),
  // `what` its name for errors; `mode`: where the buffers stand. Valid until the next
  // Prepare.
  Result<const PreparedCall*> Prepare(const Call& call, uint16_t kind, const char* what,
                                      const std::atomic<bool>* abort,
                                      BufferMode mode = BufferMode::kPlain);
  // Whether the user's slot holds `call` as is: it was validated when planned.
  bool HoldsUserCall(const Call& call) const {
    return user_.Holds(call, static_cast<uint16_t>(call.coll), user_.mode);
  }

 private:
  // The last collective planned, one slot for the user's calls and one for the
  // library's own, so neither evicts the other.
  struct Slot {
    PreparedCall plan;
    bool valid = false;
    BufferMode mode = BufferMode::kPlain;  // the buffers it was planned for
    // Whether the plan runs `call` as is; `wire_kind` tells the library's calls apart.
    bool Holds(const Call& call, uint16_t wire_kind, BufferMode on) const {
      return valid && plan.ctx.kind == wire_kind && mode == on && SameCollective(call, plan.call);
    }
  };

  // The planner's choice for `spec`: the algorithm and its segments (cached); at
  // WEFT_DEBUG=INFO rank 0 logs the first choice of each collective and size class with
  // the reason behind it.
  struct Choice {
    const sched::Algorithm* algorithm;
    int segments;
  };
  Result<Choice> ChooseAlgorithm(const sched::CollectiveSpec& spec, size_t esize);
  // The schedule for `spec` (its topology is left null: the communicator's own is used)
  // and the name of its algorithm, from the caches below, else built.
  Result<const sched::Schedule*> LookUpSchedule(const sched::CollectiveSpec& spec, size_t esize,
                                                const char** algo_name);

  const int rank_;
  const int size_;
  const sched::Planner planner_;
  // Which host each rank is on (from the mesh), given to the planner with every spec.
  const std::shared_ptr<const sched::Topology> topology_;
  Slot user_, own_;
  // A slot's schedule also serves a call of the same shape on other buffers, so a loop
  // repeating one shape skips both map lookups below. Both slots are cleared whenever
  // the schedules are.
  std::map<std::tuple<int, int, size_t, const void*, int>, std::unique_ptr<sched::Schedule>>
      schedules_;
  // The planner's choice per (collective, root, bytes), and the (collective, size class)
  // pairs already explained at WEFT_DEBUG=INFO.
  std::map<std::tuple<int, int, size_t, bool, bool>, Choice> choices_;
  std::set<std::pair<int, int>> explained_;
};

}  // namespace weft::comm
