// init_only: weftCommInitFromEnv, a barrier, weftCommDestroy. For error-path tests of
// the rendezvous (a wrong world size, missing ranks): on failure it prints the library's
// message, which must say what it was waiting for.
#include <cstdio>

#include "weft/weft.h"

int main() {
  weftComm_t comm = nullptr;
  weftResult_t res = weftCommInitFromEnv(&comm);
  if (res != weftSuccess) {
    std::fprintf(stderr, "init_only: weftCommInitFromEnv failed: %s: %s\n",
                 weftGetErrorString(res), weftGetLastError(nullptr));
    return 2;
  }
  res = weftBarrier(comm);
  if (res != weftSuccess) {
    std::fprintf(stderr, "init_only: weftBarrier failed: %s: %s\n", weftGetErrorString(res),
                 weftGetLastError(comm));
    return 2;
  }
  weftCommDestroy(comm);
  std::printf("init_only: ok\n");
  return 0;
}
