// weft-bench's command line, in the spelling of nccl-tests.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weftbench {

struct Options {
  std::vector<std::string> ops;           // --collective or program name, "all" expanded
  size_t min_bytes = 32u << 20;           // nccl-tests defaults
  size_t max_bytes = 32u << 20;
  double step_factor = 2.0;
  size_t step_bytes = 0;                  // -i without -f: linear steps of this many bytes
  std::vector<weftDataType_t> dtypes;     // -d, "all" expanded
  std::vector<weftRedOp_t> redops;        // -o, "all" expanded
  int iters = 20;
  int warmup_iters = 5;
  int agg_iters = 1;                      // -m: calls per timed iteration
  int average = 3;                        // -a: 0 rank 0, 1 mean, 2 min, 3 max of the ranks
  bool check = true;
  bool shared_mem = false;                // --mem shared: buffers from weftMemAlloc, registered
  int root = 0;
  std::string json_path;                  // empty: no JSON
  std::vector<std::string> argv;          // for the JSON record
};

// On --help or a usage error prints (stdout / stderr) and returns the process exit
// code in exit_code; otherwise returns the options.
struct ParseOutcome {
  std::optional<Options> options;
  int exit_code = 0;
};
ParseOutcome ParseOptions(int argc, char** argv);
// "allreduce" for ".../all_reduce_perf" (nccl-tests' binary names); "" for other names.
std::string CollectiveFromProgramName(std::string_view argv0);
// weft's version, as weftGetVersion reports it ("0.1.0").
std::string WeftVersionString();

}  // namespace weftbench
