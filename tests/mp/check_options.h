// collectives_check's command line: which subset of the case matrix to run, so CI can
// spread the matrix over several tests. Every list defaults to "all".
//   --colls=allreduce,reduce,...   --dtypes=int8,float16,...   --ops=sum,prod,min,max,avg
//   --counts=0,1,7,1023,65537      --roots=all | 0,2 (default: all for N<=5, else 0,N/2,N-1)
//   --modes=blocking,wait,test     --inplace=both|yes|no       --split=yes|no|only
//   --max-print=N (failure lines per rank, default 20)        --verbose (one line per batch)
//   --mem=plain|shared|allocated|even|shm-file: the matrix's buffers on the heap (default),
//     in one weftMemAlloc arena registered with the communicator, in one not registered,
//     registered on even ranks and on the heap on odd ones, or in an unlinked /dev/shm
//     file mapped shared (as torch's share_memory_() makes)
//   --expect-single-pass: with --mem=shared, allocated or shm-file, blocking cases must
//     report (through weftCommGetLastAlgorithm) the single-pass algorithm exactly where the
//     registered path takes the call: a collective (all-to-all out of place only) whose
//     largest buffer has at least kSinglePassMinBytes, on two ranks or more
//   --self-test: checks the checker. Every rank spoils one output element of every case
//   after the collective; a case whose spoiled output still verifies is the failure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "check_case.h"
#include "check_memory.h"

namespace check {

struct Options {
  std::vector<Coll> colls;
  std::vector<weftDataType_t> dtypes;
  std::vector<weftRedOp_t> ops;
  std::vector<size_t> counts = {0, 1, 7, 1023, 65537};
  std::optional<std::vector<int>> roots;  // nullopt: the default for the world size
  std::vector<Mode> modes = {Mode::kBlocking, Mode::kWait, Mode::kTest};
  std::vector<bool> placements = {false, true};  // in place?
  bool run_matrix = true;
  bool run_split = true;
  int max_print = 20;
  bool verbose = false;
  bool self_test = false;
  Memory memory = Memory::kPlain;
  bool expect_single_pass = false;
};

// RegisteredPath::kMinBytes and kFileMinBytes (src/comm/registered_path.h), which the
// public API does not expose: --expect-single-pass checks the library against these copies
// (the second for --mem=shm-file: buffers in the caller's tmpfs files).
inline constexpr size_t kSinglePassMinBytes = 64 << 10;
inline constexpr size_t kSinglePassFileMinBytes = 256 << 10;

// Returns false (after printing why to stderr) on a malformed command line.
bool ParseOptions(int argc, char** argv, Options* out);
// The roots to test on a world of `nranks`.
std::vector<int> RootsFor(const Options& o, int nranks);

}  // namespace check
