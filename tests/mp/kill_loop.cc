// kill_loop: a loop of random collectives in which one rank SIGKILLs itself at a random
// moment; every other rank must get an error that names the dead rank, in bounded time.
// Driven by kill_test.sh under `weftrun --keep-going` (so survivors are not torn down).
//
//   kill_loop SEED DIR
//
// All ranks derive the same victim and the same sequence of calls from SEED. The victim
// starts a thread that sleeps a random 20-400 ms (the loop is running by then), writes the
// CLOCK_MONOTONIC time into DIR/death and raises SIGKILL: the process dies at an
// arbitrary point of a collective, as under `kill -9`. Every rank writes its pid into
// DIR/pid.RANK so the driver can check that nothing outlives the job.
//
// A survivor prints one line and exits 0 when its error names the victim
// ("SURVIVOR rank 2: detected in 14 ms: ..."), else "FAIL ..." and exits 1. A survivor
// whose loop runs 60 s without an error fails too (never reached when detection works).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// One call of the loop, the same on every rank for a given iteration.
weftResult_t Step(std::mt19937_64& rng, weftComm_t comm, int size, std::vector<float>& a,
                  std::vector<float>& b) {
  // Mostly small messages, some large ones (several socket buffers, many ring passes).
  size_t count = (rng() % 4 == 0) ? 1 + rng() % (1 << 18) : 1 + rng() % 4096;
  int root = static_cast<int>(rng() % size);
  size_t need = count * size;
  if (a.size() < need) a.resize(need, 1.0f), b.resize(need, 0.0f);
  switch (rng() % 6) {
    case 0: return weftAllReduce(a.data(), b.data(), count, weftFloat32, weftSum, comm);
    case 1: return weftAllGather(a.data(), b.data(), count, weftFloat32, comm);
    case 2: return weftBroadcast(a.data(), b.data(), count, weftFloat32, root, comm);
    case 3: return weftReduceScatter(a.data(), b.data(), count, weftFloat32, weftSum, comm);
    case 4: return weftAllToAll(a.data(), b.data(), count / size + 1, weftFloat32, comm);
    default: return weftBarrier(comm);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kill_loop SEED DIR\n");
    return 2;
  }
  const uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  const std::string dir = argv[2];
  weftComm_t comm = nullptr;
  weftResult_t res = weftCommInitFromEnv(&comm);
  if (res != weftSuccess) {
    std::printf("FAIL init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rank = 0, size = 0;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &size);
  std::ofstream(dir + "/pid." + std::to_string(rank)) << getpid() << "\n";

  std::mt19937_64 plan(seed);
  const int victim = static_cast<int>(plan() % size);
  const int delay_ms = 20 + static_cast<int>(plan() % 380);
  if (rank == victim) {
    std::thread([dir, delay_ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      std::ofstream(dir + "/death") << MonotonicNs() << "\n" << std::flush;
      raise(SIGKILL);
    }).detach();
  }

  std::vector<float> a, b;
  const int64_t start = MonotonicNs();
  uint64_t iter = 0;
  while (true) {
    std::mt19937_64 rng(seed * 1000003 + iter++);
    res = Step(rng, comm, size, a, b);
    if (res != weftSuccess) break;
    if (MonotonicNs() - start > int64_t{60} * 1000000000) {
      std::printf("FAIL rank %d: no error 60 s into the loop (victim rank %d)\n", rank, victim);
      return 1;
    }
  }
  const int64_t detected = MonotonicNs();
  const std::string error = weftGetLastError(comm);
  weftCommAbort(comm);  // on a failed communicator: must return at once and free it

  if (rank == victim) {  // the victim itself cannot fail a call before it dies
    std::printf("FAIL rank %d: the victim got an error before dying: %s\n", rank, error.c_str());
    return 1;
  }
  int64_t death = 0;
  std::ifstream(dir + "/death") >> death;
  if (death == 0) {
    std::printf("FAIL rank %d: error but rank %d is not dead: %s\n", rank, victim, error.c_str());
    return 1;
  }
  const double ms = (detected - death) / 1e6;
  // The dead rank must be named as such: "rank V" not followed by another digit.
  std::regex named("rank " + std::to_string(victim) + "([^0-9]|$)");
  if (!std::regex_search(error, named)) {
    std::printf("FAIL rank %d: error %.0f ms after rank %d died does not name it: %s\n", rank,
                ms, victim, error.c_str());
    return 1;
  }
  const char* timeout = std::getenv("WEFT_TIMEOUT");
  const double bound_ms = 2000.0 * (timeout ? std::atof(timeout) : 300.0);
  if (ms > bound_ms) {
    std::printf("FAIL rank %d: error %.0f ms after rank %d died, over 2 x WEFT_TIMEOUT: %s\n",
                rank, ms, victim, error.c_str());
    return 1;
  }
  std::printf("SURVIVOR rank %d: detected in %.1f ms (%s, victim rank %d, %llu calls): %s\n",
              rank, ms, weftGetErrorString(res), victim,
              static_cast<unsigned long long>(iter), error.c_str());
  return 0;
}
