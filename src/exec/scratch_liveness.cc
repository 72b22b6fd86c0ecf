#include "exec/scratch_liveness.h"

#include <algorithm>

namespace weft::exec {

using sched::Buf;
using sched::Schedule;
using sched::Slice;
using sched::Step;
using sched::StepKind;

namespace {

// How many later steps ScratchReadLater looks at before it gives up and says "read".
constexpr size_t kLivenessScanSteps = 512;

bool TouchesScratch(const Slice& s, size_t lo, size_t hi) {
  return s.buf == Buf::kScratch && s.count > 0 && s.offset < hi && lo < s.offset + s.count;
}

}  // namespace

// A later round's receive that covers either end of what is still live shortens it; a
// local step that touches it, or a send that reads it, counts as a read.
bool ScratchReadLater(const Schedule& schedule, size_t r, size_t next_local, const Slice& y) {
  if (y.buf != Buf::kScratch) return true;
  size_t lo = y.offset, hi = y.offset + y.count;
  size_t budget = kLivenessScanSteps;
  const auto& now = schedule.rounds[r].steps;
  bool seen_own_recv = false;
  for (size_t i = 0; i < now.size(); ++i) {
    const Step& st = now[i];
    if (st.kind == StepKind::kRecv) {
      // The receive of y is the round's only one that may touch it.
      const bool own = !seen_own_recv && st.dst.buf == y.buf && st.dst.offset == y.offset &&
                       st.dst.count == y.count;
      if (own) {
        seen_own_recv = true;
        continue;
      }
      if (TouchesScratch(st.dst, lo, hi)) return true;
    } else if (st.kind == StepKind::kSend) {
      if (TouchesScratch(st.src, lo, hi)) return true;
    } else if (i >= next_local &&
               (TouchesScratch(st.src, lo, hi) || TouchesScratch(st.dst, lo, hi))) {
      return true;
    }
  }
  for (size_t k = r + 1; k < schedule.rounds.size(); ++k) {
    const auto& steps = schedule.rounds[k].steps;
    if (steps.size() > budget) return true;
    budget -= steps.size();
    // A round's sends and receives are in flight together: a send reads what was there
    // before any of the round's receives lands.
    for (const Step& st : steps)
      if (st.kind == StepKind::kSend && TouchesScratch(st.src, lo, hi)) return true;
    for (const Step& st : steps) {
      if (st.kind != StepKind::kRecv || !TouchesScratch(st.dst, lo, hi)) continue;
      const size_t a = st.dst.offset, b = st.dst.offset + st.dst.count;
      if (a <= lo) lo = std::max(lo, b);
      else if (b >= hi) hi = std::min(hi, a);
      if (lo >= hi) return false;
    }
    for (const Step& st : steps) {
      if (st.kind == StepKind::kSend || st.kind == StepKind::kRecv) continue;
      if (TouchesScratch(st.src, lo, hi) || TouchesScratch(st.dst, lo, hi)) return true;
    }
  }
  return false;
}

}  // namespace weft::exec
