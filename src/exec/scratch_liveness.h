// Whether a schedule reads a piece of scratch again: the executor reduces a receive where
// the link holds it (RecvOp::consume), so the receive's scratch never gets the bytes, only
// when nothing afterwards reads them there.
#pragma once

#include <cstddef>

#include "sched/schedule.h"

namespace weft::exec {

// Whether any step after local step `next_local` of round `r` (the round's receive into
// `y` aside) may read scratch elements of `y` before a receive writes them again.
// Conservative: it says "read" for a slice that is not scratch's, past a few hundred
// later steps, and where a later receive overwrites only the middle of what is live.
bool ScratchReadLater(const sched::Schedule& schedule, size_t r, size_t next_local,
                      const sched::Slice& y);

}  // namespace weft::exec
