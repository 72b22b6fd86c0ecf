// weftCommShrink: a new communicator of the surviving ranks of `parent`, agreed among them
// through the rendezvous store (the parent's links may be dead), in their old order.
//
// Agreement (docs/RELIABILITY.md, "weftCommShrink"): under a fresh key prefix per shrink
// (communicator id + the caller's shrink count), every caller posts its exclusion list
// (explicit, or the ranks its failure names as lost) and polls the others' posts. Sets only
// grow: every posted exclusion is taken; a rank that has not posted is waited for until
// WEFT_TIMEOUT, or for a short grace when some caller names it as lost. The first caller
// to finish wins an atomic counter and publishes the final set; every caller adopts that
// one, so all agree even when their own views differed.
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/status.h"

namespace weft::comm {

// Blocking, bounded by WEFT_TIMEOUT (twice, at worst: agreement, then connecting).
// `exclude`: old ranks to leave out; empty: those the parent's failure names as lost,
// plus any rank that does not take part in time. `abort_parent`: Abort() the parent
// first (its calls in flight on other threads end). Errors:
//   InvalidArgument: a rank out of range or listed twice, or every rank excluded;
//   InvalidUsage: this rank is excluded (listed, or excluded by the agreement);
//   Unavailable / DeadlineExceeded: the store cannot be reached (its host died), a
//     member did not connect in time. Each names the rank and the cause.
// REQUIRES: every survivor calls it the same number of times on `parent`.
Result<std::unique_ptr<Communicator>> Shrink(Communicator& parent,
                                             const std::vector<int>& exclude,
                                             bool abort_parent);

}  // namespace weft::comm
