// weftCommSplit checks: the sub-communicators have the right size, rank order and
// members, and carry collectives of their own.
#pragma once

#include "check_options.h"
#include "check_runner.h"

namespace check {

// Collective over `world`. Results go to `tally` (a failed API call sets tally->fatal).
void RunSplitChecks(weftComm_t world, int rank, int nranks, const Options& opts, Tally* tally,
                    uint64_t salt_base);

}  // namespace check
