// A straggler for the flight recorder and weft-doctor (tests/mp/doctor_test.sh): every
// rank runs a few allreduces; before allreduce number STRAGGLE_AT the straggler rank
// sleeps in its own code. Meanwhile each rank raises SIGUSR1 on itself, so every rank
// dumps its flight recorder while the others wait inside weft for the straggler.
//   straggler STRAGGLER_RANK STRAGGLE_AT SLEEP_S SIGNAL_AFTER_S
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "weft/weft.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: straggler STRAGGLER_RANK STRAGGLE_AT SLEEP_S SIGNAL_AFTER_S\n");
    return 2;
  }
  const int straggler = std::atoi(argv[1]), at = std::atoi(argv[2]);
  const double sleep_s = std::atof(argv[3]), signal_after = std::atof(argv[4]);
  weftComm_t comm;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::fprintf(stderr, "init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  weftCommUserRank(comm, &rank);
  std::thread([signal_after] {
    std::this_thread::sleep_for(std::chrono::duration<double>(signal_after));
    kill(getpid(), SIGUSR1);
  }).detach();
  float x[1024] = {};
  for (int i = 0; i < at + 2; ++i) {
    if (i == at && rank == straggler)
      std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
    if (weftAllReduce(x, x, 1024, weftFloat32, weftSum, comm) != weftSuccess) {
      std::fprintf(stderr, "rank %d: %s\n", rank, weftGetLastError(comm));
      return 1;
    }
  }
  weftCommDestroy(comm);
  std::printf("rank %d done\n", rank);
  return 0;
}
