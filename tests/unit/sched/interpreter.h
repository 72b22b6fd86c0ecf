// An in-memory interpreter that runs the schedules of all ranks of one collective
// together, over byte buffers, for tests (and for debugging a schedule). Pure: no
// threads, no clocks, no I/O; the reduction is a callback, so this layer does not
// depend on the executor's kernels.
//
// It follows the IR semantics of schedule.h: a rank posts all sends and receives of its
// current round at once (a send's data is captured when posted), the round completes
// when all of them have matched, then its local steps run in order. Messages between a
// pair of ranks match in FIFO order and must have equal element counts.
//
// Rejected, with a Status whose message names the rank, round and step:
//   - a peer out of range, or a rank sending to itself;
//   - a slice outside its buffer (InputCount / OutputCount / scratch_count);
//   - a write (receive, reduce, copy) into the input buffer;
//   - within one round on one rank, a receive overlapping a send or another receive
//     (the transport would read and write the region concurrently), computed on the real
//     addresses, so in-place aliasing counts;
//   - a reduce whose source overlaps its destination, a copy whose source partly
//     overlaps its destination, or unequal source and destination counts;
//   - a send and its receive that disagree on the element count;
//   - deadlock (no rank can progress), with what every stuck rank waits for;
//   - messages left unreceived at the end;
//   - registered schedules (CollectiveSpec::registered; kSync and the kPeer* steps, which
//     run on the peer's buffers as they are at that point): a peer step in a spec that is
//     not registered, a peer's scratch or a write into a peer's input, a slice outside the
//     peer's buffer, an access to a peer's buffer not ordered after the peer entered the
//     call or before it left it (a kSync or a message apart, by vector clocks), and two
//     ranks' unordered accesses to the same elements where one writes.
// All of these are schedule bugs: Code::kInternal, except malformed inputs to the
// interpreter itself (InvalidArgument).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "core/status.h"
#include "sched/schedule.h"

namespace weft::sched {

// dst[i] = dst[i] (op) src[i] for i < count elements.
using ReduceFn = std::function<void(void* dst, const void* src, size_t count)>;

struct InterpretOptions {
  // Run as an in-place call: each rank's input aliases its output at InPlaceOffset.
  // Ranks whose schedule says inplace_safe = false get their input copied aside first,
  // as the executor does.
  bool in_place = false;
  // true: a send completes only when the peer has posted the matching receive, as over a
  // rendezvous transport (catches more deadlocks); false: sends are buffered (eager).
  bool rendezvous = true;
};

// Runs `schedules[r]` as rank r of `spec` (spec.rank is ignored) for every rank.
// `inputs[r]` must hold InputCount(spec as rank r) * elem_size bytes. On success, returns
// every rank's output buffer, OutputCount(spec as rank r) * elem_size bytes each. Bytes a
// schedule leaves unwritten hold a fill pattern (0xA5), never zeros.
Result<std::vector<std::vector<std::byte>>> Interpret(
    const CollectiveSpec& spec, const std::vector<Schedule>& schedules,
    const std::vector<std::vector<std::byte>>& inputs, size_t elem_size, const ReduceFn& reduce,
    const InterpretOptions& options = {});

// Every rank's schedule for `spec` (spec.rank is replaced by 0 .. size-1).
std::vector<Schedule> BuildAllRanks(Schedule (*build)(const CollectiveSpec&),
                                    const CollectiveSpec& spec);

}  // namespace weft::sched
