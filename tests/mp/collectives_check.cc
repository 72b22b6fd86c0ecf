// collectives_check: every collective x dtype x reduction x count x root x placement x
// completion mode, through the public C API only, on the communicator the launcher's
// environment describes (weftrun, torchrun, ...). Then weftCommSplit checks.
//
// Each rank prints "collectives_check: N passed, M failed" and exits 0 only if nothing
// failed; 1 on wrong results, 2 on an API error (after which the ranks may disagree on
// what comes next, so the run stops), 3 on a bad command line.
#include <chrono>
#include <cstdio>

#include "check_options.h"
#include "check_runner.h"
#include "check_split.h"
#include "weft/weft.h"

int main(int argc, char** argv) {
  check::Options opts;
  if (!check::ParseOptions(argc, argv, &opts)) return 3;

  const auto start = std::chrono::steady_clock::now();
  weftComm_t comm = nullptr;
  weftResult_t res = weftCommInitFromEnv(&comm);
  if (res != weftSuccess) {
    std::fprintf(stderr, "collectives_check: weftCommInitFromEnv failed: %s: %s\n",
                 weftGetErrorString(res), weftGetLastError(nullptr));
    return 2;
  }
  int rank = -1, nranks = -1;
  weftCommUserRank(comm, &rank);
  weftCommCount(comm, &nranks);

  check::Tally tally;
  check::Runner runner(comm, rank, nranks, opts, &tally);
  if (opts.run_matrix) runner.RunMatrix();
  if (tally.fatal.empty() && opts.run_split) {
    check::RunSplitChecks(comm, rank, nranks, opts, &tally, 1u << 30);
  }
  // A final barrier so no rank tears down its links while a peer still uses them.
  if (tally.fatal.empty() && (res = weftBarrier(comm)) != weftSuccess) {
    tally.fatal = std::string("ERROR final barrier: ") + weftGetErrorString(res) + ": " +
                  weftGetLastError(comm);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!tally.fatal.empty()) {
    std::fprintf(stderr, "%s\n", tally.fatal.c_str());
    std::printf("collectives_check: %d passed, %d failed, stopped by an API error (%.1f s)\n",
                tally.passed, tally.failed + 1, secs);
    std::fflush(stdout);
    return 2;  // no weftCommDestroy: peers may be stuck in a collective we abandoned
  }
  runner.ReleaseMemory();
  res = weftCommDestroy(comm);
  if (res != weftSuccess) {
    std::fprintf(stderr, "collectives_check: weftCommDestroy failed: %s\n",
                 weftGetErrorString(res));
    ++tally.failed;
  }
  std::printf("collectives_check: %d passed, %d failed (world %d, rank %d, %.1f s)\n",
              tally.passed, tally.failed, nranks, rank, secs);
  return tally.failed == 0 ? 0 : 1;
}
