// A collective planned once for its exact arguments. Everything a call needs besides
// its sequence number and deadline (the schedule, the executor's context, which buffers
// are private temporaries, whether the input must be copied for an in-place call, the
// average's division) depends only on the call's arguments and the communicator, so a
// loop repeating one call (a training step's buckets, a benchmark) plans it once and then
// runs it with a comparison of the arguments instead of the planner and the checks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "comm/aligned_buffer.h"
#include "comm/call.h"
#include "core/status.h"
#include "exec/executor.h"
#include "sched/schedule.h"

namespace weft::comm {

struct PreparedCall {
  Call call;  // the arguments it was planned for
  const sched::Schedule* schedule = nullptr;
  const char* algo = "";  // the schedule's algorithm (registry name, static)
  // The executor's context but for seq, deadline and progress, which are set per call.
  exec::ExecContext ctx;
  size_t in_bytes = 0, out_bytes = 0, scratch_bytes = 0;
  bool private_output = false;  // a non-root's reduce or gather output: a temporary
  bool private_input = false;   // a non-root's scatter input, a NULL broadcast input
  bool copy_input = false;      // in place, and the schedule is not: copy the input first
  size_t divide_count = 0;      // kAvg: the output elements to divide by the size
};

// Whether `a` and `b` are the same collective on the same buffers (a prepared call
// planned for `a` runs `b` unchanged).
inline bool SameCollective(const Call& a, const Call& b) {
  return a.kind == b.kind && a.coll == b.coll && a.send == b.send && a.recv == b.recv &&
         a.count == b.count && a.dtype == b.dtype && a.op == b.op && a.root == b.root;
}

// Plans collective `call` (validated) of rank `rank` of `size` on `schedule`; `kind` is
// its wire kind (0: the call's own) and `what` its name for errors.
PreparedCall PrepareCall(const Call& call, int rank, int size, const sched::Schedule& schedule,
                         const char* algo, uint16_t kind, const char* what,
                         const std::atomic<bool>* abort);

// The temporaries a prepared call may need; they grow only, and are reserved again on
// every call because a call of another shape may have moved them.
struct Temporaries {
  AlignedBuffer scratch, input, output;
};

// The buffers the executor runs `p` on for this call (`call` matches `p.call`), copying
// the input first where `p.copy_input` says so.
Result<exec::Buffers> BuffersFor(const PreparedCall& p, const Call& call, Temporaries& temps);

// After the schedule: divides an average's output by the size (a no-op otherwise).
void FinishCall(const PreparedCall& p, const exec::Buffers& bufs, int size);

}  // namespace weft::comm
