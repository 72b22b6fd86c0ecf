// Resident memory of this process, for the per-rank memory figure of the benchmark
// report (issue 3 asks for RSS per rank at 2, 4 and 8 ranks). Linux /proc only.
#pragma once

#include <cstdint>

namespace weftbench {

struct RssKiB {
  int64_t now = 0;   // VmRSS: resident now, shared-memory pages this rank touched included
  int64_t peak = 0;  // VmHWM: the most ever resident
};

// Zeros where /proc/self/status cannot be read.
RssKiB ReadRss();

}  // namespace weftbench
