#include "options.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include <fmt/format.h>

#include "collectives.h"
#include "common/byte_size.h"
#include "dtypes.h"

namespace weftbench {

namespace {

using weft::tools::ParseByteSize;

// A CLI11 validator from ParseByteSize, so errors read like every other option's.
CLI::Validator SizeValidator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return ParseByteSize(s) ? std::string()
                                : "'" + s + "' is not a size: expected " +
                                      weft::tools::kByteSizeSyntax;
      },
      "SIZE[K|M|G]");
}

}  // namespace

std::string WeftVersionString() {
  int v = 0;
  if (weftGetVersion(&v) != weftSuccess) return "unknown";
  return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

// The collective nccl-tests' binary name stands for ("all_reduce_perf" -> "allreduce"),
// so weft-bench installed or linked under that name runs as that program does.
std::string CollectiveFromProgramName(std::string_view argv0) {
  const size_t slash = argv0.rfind('/');
  if (slash != std::string_view::npos) argv0.remove_prefix(slash + 1);
  constexpr std::string_view kSuffix = "_perf";
  if (argv0.size() <= kSuffix.size() || argv0.substr(argv0.size() - kSuffix.size()) != kSuffix)
    return "";
  std::string name;
  for (char c : argv0.substr(0, argv0.size() - kSuffix.size()))
    if (c != '_') name += c;
  return FindCollective(name) != nullptr ? name : "";
}

namespace {

// The flags as typed, before they are checked against each other.
struct Raw {
  std::string collective, minb = "32M", maxb = "32M", stepb, dtype = "float32", redop = "sum";
  int check = 1, gpus = 1, threads = 1, blocking = 0, parallel_init = 0, graphs = 0;
  std::string mem = "plain";
};

void AddOptions(CLI::App& app, Raw& r, Options& o, const std::string& op_names) {
  app.add_option("--collective", r.collective,
                 "collective: " + op_names + " (default: from the program's name, "
                 "all_reduce_perf etc., else allreduce)");
  app.add_option("-o,--op", r.redop, "reduction: sum prod min max avg, or all")
      ->capture_default_str();
  // An explicit range: CLI11's NonNegativeNumber prints DBL_MAX's 300 digits when refusing.
  app.add_option("-r,--root", o.root, "root rank of rooted collectives")
      ->check(CLI::Range(0, (1 << 24) - 1))->capture_default_str();
  app.add_option("-b,--minbytes", r.minb, "smallest total size S")
      ->check(SizeValidator())->capture_default_str();
  app.add_option("-e,--maxbytes", r.maxb, "largest total size S")
      ->check(SizeValidator())->capture_default_str();
  app.add_option("-f,--stepfactor", o.step_factor, "size multiplier between steps")
      ->check(CLI::Range(1.0001, 1e9))->capture_default_str();
  app.add_option("-i,--stepbytes", r.stepb, "size increment between steps (used without -f)")
      ->check(SizeValidator());
  app.add_option("-d,--datatype", r.dtype,
                 "int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64 "
                 "(aliases: char int uint half fp16 bf16 float fp32 double fp64), or all")
      ->capture_default_str();
  app.add_option("-n,--iters", o.iters, "timed iterations per size")
      ->check(CLI::Range(1, 1 << 30))->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmup_iters, "untimed iterations per size")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("-m,--agg_iters", o.agg_iters,
                 "calls per timed iteration (weft has no group calls: issued one by one)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  app.add_option("-a,--average", o.average,
                 "time reported: 0 rank 0's, 1 the ranks' mean, 2 fastest, 3 slowest rank")
      ->check(CLI::Range(0, 3))->capture_default_str();
  app.add_option("-c,--check", r.check, "verify results (0/1)")
      ->check(CLI::IsMember({0, 1}))->capture_default_str();
  app.add_option("-g,--ngpus", r.gpus, "devices per process (1: one process per rank)")
      ->capture_default_str();
  app.add_option("-t,--nthreads", r.threads, "threads per process (1)")->capture_default_str();
  app.add_option("-p,--parallel_init", r.parallel_init, "0 (one rank per process)")
      ->capture_default_str();
  app.add_option("-z,--blocking", r.blocking,
                 "0 or 1; weft's calls return once complete, so both measure the same")
      ->capture_default_str();
  app.add_option("-G,--cudagraph", r.graphs, "0 (CUDA graphs are not captured)")
      ->capture_default_str();
  app.add_option("--mem", r.mem,
                 "buffers: plain (aligned_alloc) or shared (weftMemAlloc, registered with the "
                 "communicator)")
      ->check(CLI::IsMember({"plain", "shared"}))->capture_default_str();
  app.add_option("--json", o.json_path, "write results as JSON to FILE (rank 0)");
}

ParseOutcome Usage(const std::string& msg) {
  std::fprintf(stderr, "weft-bench: %s\n", msg.c_str());
  return ParseOutcome{std::nullopt, 2};
}

// nccl-tests flags whose other values weft-bench does not implement: a clear error
// rather than a silently different run.
std::optional<std::string> UnsupportedValue(const Raw& r) {
  if (r.gpus != 1)
    return fmt::format("-g {}: weft-bench drives one device per process; start one process "
                       "per rank (weftrun -n N, srun, mpirun) with -g 1", r.gpus);
  if (r.threads != 1)
    return fmt::format("-t {}: one thread per process; start one process per rank", r.threads);
  if (r.parallel_init != 0) return fmt::format("-p {}: only 0 (one rank per process)", r.parallel_init);
  if (r.blocking != 0 && r.blocking != 1) return fmt::format("-z {}: expected 0 or 1", r.blocking);
  if (r.graphs != 0) return fmt::format("-G {}: CUDA graph capture is not supported; use 0", r.graphs);
  return std::nullopt;
}

ParseOutcome Resolve(const Raw& r, Options o, const std::string& op_names) {
  if (auto why = UnsupportedValue(r)) return Usage(*why);
  std::string coll = r.collective.empty() ? CollectiveFromProgramName(o.argv[0]) : r.collective;
  if (coll.empty()) coll = "allreduce";
  if (coll == "all") {
    for (const auto& c : Collectives()) o.ops.emplace_back(c.name);
  } else if (FindCollective(coll) != nullptr) {
    o.ops.push_back(coll);
  } else {
    return Usage("unknown collective '" + coll + "' (one of: " + op_names + ")");
  }
  if (r.dtype == "all") {
    for (const auto& d : kDtypes) o.dtypes.push_back(d.type);
  } else if (auto t = ParseDtype(r.dtype)) {
    o.dtypes.push_back(*t);
  } else {
    return Usage("unknown datatype '" + r.dtype + "'");
  }
  if (r.redop == "all") {
    for (int i = 0; i < weftNumOps; ++i) o.redops.push_back(static_cast<weftRedOp_t>(i));
  } else if (auto op = ParseRedOp(r.redop)) {
    o.redops.push_back(*op);
  } else if (FindCollective(r.redop) != nullptr || r.redop == "all") {
    return Usage("-o is the reduction, as in nccl-tests (sum prod min max avg all); choose "
                 "the collective with --collective " + r.redop);
  } else {
    return Usage("unknown reduction '" + r.redop + "' (sum prod min max avg all)");
  }
  o.min_bytes = *ParseByteSize(r.minb);
  o.max_bytes = *ParseByteSize(r.maxb);
  if (o.min_bytes > o.max_bytes) return Usage("--minbytes is larger than --maxbytes");
  o.check = r.check != 0;
  o.shared_mem = r.mem == "shared";
  return {o, 0};
}

}  // namespace

ParseOutcome ParseOptions(int argc, char** argv) {
  Options o;
  Raw r;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);
  if (o.argv.empty()) o.argv.emplace_back("weft-bench");
  std::string op_names = "all";
  for (const auto& c : Collectives()) op_names += std::string(", ") + c.name;
  CLI::App app{"weft-bench: collective bandwidth and correctness, with nccl-tests' flags.\n"
               "One process per rank, e.g. weftrun -n 4 weft-bench -b 8 -e 128M -f 2 -g 1; "
               "alone it runs a world of one"};
  AddOptions(app, r, o, op_names);
  app.set_version_flag("--version", std::string("weft-bench (weft ") + WeftVersionString() + ")");
  CLI::Option* step_factor = app.get_option("-f");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return {std::nullopt, rc == 0 ? 0 : 2};
  }
  // nccl-tests steps by -f when it is given, else by -i.
  if (!r.stepb.empty() && step_factor->count() == 0) o.step_bytes = *ParseByteSize(r.stepb);
  return Resolve(r, std::move(o), op_names);
}

}  // namespace weftbench
