// What weft-bench does with a failed weft call: say which call, the result's name and
// the communicator's detailed message, and exit non-zero. Any rank may print this (the
// table is rank 0's alone); the launcher tears the other ranks down.
#pragma once

#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>

namespace weftbench {

inline void CheckWeft(weftResult_t r, weftComm_t comm, const char* what) {
  if (r == weftSuccess) return;
  const char* detail = weftGetLastError(comm);
  std::fprintf(stderr, "weft-bench: %s failed: %s: %s\n", what, weftGetErrorString(r),
               detail != nullptr ? detail : "(no detail)");
  std::fflush(stderr);
  std::exit(1);
}

}  // namespace weftbench
