#include "comm/plan_cache.h"

#include "core/log.h"

namespace weft::comm {
namespace {

// Schedules are cached per (collective, root, count, algorithm); a cap keeps a job that
// sweeps sizes from growing without bound.
constexpr size_t kMaxCachedSchedules = 256;

}  // namespace

PlanCache::PlanCache(int rank, int size, sched::Planner planner,
                     std::shared_ptr<const sched::Topology> topology)
    : rank_(rank), size_(size), planner_(std::move(planner)), topology_(std::move(topology)) {}

Result<const PreparedCall*> PlanCache::Prepare(const Call& call, uint16_t kind, const char* what,
                                               const std::atomic<bool>* abort, BufferMode mode) {
  Slot& slot = kind == 0 ? user_ : own_;
  if (!slot.Holds(call, kind != 0 ? kind : static_cast<uint16_t>(call.coll), mode)) {
    // The schedule depends on the shape alone: the slot's serves other buffers or op.
    const sched::Schedule* schedule = slot.plan.schedule;
    const char* algo = slot.plan.algo;
    const Call& last = slot.plan.call;
    if (!slot.valid || slot.mode != mode || last.coll != call.coll || last.root != call.root ||
        last.count != call.count || DataTypeSize(last.dtype) != DataTypeSize(call.dtype)) {
      sched::CollectiveSpec spec = SpecOf(call, rank_, size_);
      spec.registered = mode != BufferMode::kPlain;
      spec.may_be_in_place = mode != BufferMode::kRegisteredOutOfPlace;
      WEFT_ASSIGN_OR_RETURN(schedule, LookUpSchedule(spec, DataTypeSize(call.dtype), &algo));
    }
    slot.plan = PrepareCall(call, rank_, size_, *schedule, algo, kind, what, abort);
    slot.valid = true;
    slot.mode = mode;
  }
  return &slot.plan;
}

Result<PlanCache::Choice> PlanCache::ChooseAlgorithm(const sched::CollectiveSpec& spec,
                                                     size_t esize) {
  const size_t bytes = spec.count * esize;
  const auto key = std::make_tuple(static_cast<int>(spec.coll), spec.root, bytes, spec.registered,
                                   spec.may_be_in_place);
  auto it = choices_.find(key);
  if (it != choices_.end()) return it->second;
  WEFT_ASSIGN_OR_RETURN(sched::PlanChoice choice, planner_.Explain({spec, esize}));
  // Size class k holds [2^(k-1), 2^k) bytes (class 0: empty calls).
  int size_class = 0;
  while (size_class < 63 && (bytes >> size_class) != 0) ++size_class;
  if (rank_ == 0 && explained_.insert({static_cast<int>(spec.coll), size_class}).second) {
    const size_t lo = size_class == 0 ? 0 : size_t{1} << (size_class - 1);
    WEFT_INFO("planner: {} of {}..{} bytes on {} ranks -> {} ({})",
              sched::CollectiveName(spec.coll), lo, size_class == 0 ? 0 : 2 * lo - 1, size_,
              choice.algorithm->name, choice.reason);
  }
  if (choices_.size() >= kMaxCachedSchedules) choices_.clear();
  const Choice chosen{choice.algorithm, choice.segments};
  choices_.emplace(key, chosen);
  return chosen;
}

Result<const sched::Schedule*> PlanCache::LookUpSchedule(const sched::CollectiveSpec& call_spec,
                                                         size_t esize, const char** algo_name) {
  sched::CollectiveSpec spec = call_spec;
  spec.topology = topology_;  // copied here, on a miss, not per call
  WEFT_ASSIGN_OR_RETURN(const Choice choice, ChooseAlgorithm(spec, esize));
  const sched::Algorithm* algo = choice.algorithm;
  spec.segments = choice.segments;
  *algo_name = algo->name;
  auto key = std::make_tuple(static_cast<int>(spec.coll), spec.root, spec.count,
                             static_cast<const void*>(algo), spec.segments);
  auto it = schedules_.find(key);
  if (it != schedules_.end()) return it->second.get();
  if (schedules_.size() >= kMaxCachedSchedules) {
    schedules_.clear();
    user_.valid = own_.valid = false;  // their schedules were among them
  }
  auto schedule = std::make_unique<sched::Schedule>(algo->build(spec));
  WEFT_TRACE("{} count {} -> {}:\n{}", sched::CollectiveName(spec.coll), spec.count, algo->name,
             sched::ToString(*schedule));
  const sched::Schedule* result = schedule.get();
  schedules_.emplace(key, std::move(schedule));
  return result;
}

}  // namespace weft::comm
