// Walks the case matrix chosen by Options on one communicator, in the same order on
// every rank, running each batch (one case per count) and tallying results.
// A wrong result is counted and the run continues (every rank still makes the same
// calls); an API error stops the run, since the ranks may no longer agree on what comes
// next.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "check_case.h"
#include "check_options.h"

namespace check {

struct Tally {
  int passed = 0;
  int failed = 0;
  int printed = 0;
  std::string fatal;  // non-empty: an API call failed; stop
};

class Runner {
 public:
  Runner(weftComm_t comm, int rank, int nranks, const Options& opts, Tally* tally);

  // The full matrix (opts.colls x dtypes x ops x roots x placements x modes x counts).
  void RunMatrix();
  // Issues every case of `batch` (same everything but the count) and checks them.
  // Non-blocking modes have all of them in flight at once.
  void RunBatch(const std::vector<Case>& batch);

  uint64_t NextSalt() { return ++salt_; }
  // Deregisters and frees the shared arena: before the communicator is destroyed.
  void ReleaseMemory() { arena_.reset(); }

 private:
  void Complete(std::vector<CaseRun>& runs, Mode mode);
  void Record(const std::string& failure);
  // --expect-single-pass: "" when the blocking case `c` ran the algorithm it should.
  std::string CheckAlgorithm(const Case& c);

  weftComm_t comm_;
  int rank_, nranks_;
  const Options& opts_;
  Tally* tally_;
  uint64_t salt_ = 0;
  std::unique_ptr<SharedArena> arena_;  // --mem=shared (or even, on even ranks)
};

}  // namespace check
