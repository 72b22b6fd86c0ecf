#include "options.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>

#include "collectives.h"
#include "dtypes.h"

namespace weftbench {

std::optional<size_t> ParseSize(std::string_view s) {
  if (s.empty()) return std::nullopt;
  size_t mult = 1;
  switch (std::toupper(static_cast<unsigned char>(s.back()))) {
    case 'K': mult = size_t{1} << 10; break;
    case 'M': mult = size_t{1} << 20; break;
    case 'G': mult = size_t{1} << 30; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  size_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    if (v > (SIZE_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  if (v > SIZE_MAX / mult) return std::nullopt;
  return v * mult;
}

namespace {

// A CLI11 validator from ParseSize, so errors read like every other option's.
CLI::Validator SizeValidator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return ParseSize(s) ? std::string() : "not a size (bytes, or with K/M/G): " + s;
      },
      "SIZE[K|M|G]");
}

}  // namespace

ParseOutcome ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);
  std::string op = "allreduce", minb = "32M", maxb = "32M", dtype = "float32", redop = "sum";
  int check = 1;

  std::string op_names = "all";
  for (const auto& c : Collectives()) op_names += std::string(", ") + c.name;
  CLI::App app{"weft-bench: collective bandwidth and correctness, nccl-tests style.\n"
               "Run one process per rank, e.g. weftrun -n 4 weft-bench -b 8 -e 128M -f 2"};
  app.add_option("-o,--op", op, "collective: " + op_names)->capture_default_str();
  app.add_option("-b,--minbytes", minb, "smallest total size S")
      ->check(SizeValidator())->capture_default_str();
  app.add_option("-e,--maxbytes", maxb, "largest total size S")
      ->check(SizeValidator())->capture_default_str();
  app.add_option("-f,--stepfactor", o.step_factor, "size multiplier between steps")
      ->check(CLI::Range(1.0001, 1e9))->capture_default_str();
  app.add_option("-d,--datatype", dtype,
                 "int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64 "
                 "(aliases: char int uint half fp16 bf16 float fp32 double fp64), or all")
      ->capture_default_str();
  app.add_option("-r,--redop", redop, "sum prod min max avg, or all")->capture_default_str();
  app.add_option("-n,--iters", o.iters, "timed iterations per size")
      ->check(CLI::Range(1, 1 << 30))->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmup_iters, "untimed iterations per size")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("-c,--check", check, "verify results (0/1)")
      ->check(CLI::IsMember({0, 1}))->capture_default_str();
  app.add_option("--root", o.root, "root rank of rooted collectives")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  std::string mem = "plain";
  app.add_option("--mem", mem,
                 "buffers: plain (aligned_alloc) or shared (weftMemAlloc, registered with the "
                 "communicator)")
      ->check(CLI::IsMember({"plain", "shared"}))->capture_default_str();
  app.add_option("--json", o.json_path, "write results as JSON to FILE (rank 0)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return {std::nullopt, rc == 0 ? 0 : 2};
  }
  auto usage = [](const std::string& msg) {
    std::fprintf(stderr, "weft-bench: %s\n", msg.c_str());
    return ParseOutcome{std::nullopt, 2};
  };

  if (op == "all") {
    for (const auto& c : Collectives()) o.ops.emplace_back(c.name);
  } else if (FindCollective(op) != nullptr) {
    o.ops.push_back(op);
  } else {
    return usage("unknown collective '" + op + "' (one of: " + op_names + ")");
  }
  if (dtype == "all") {
    for (const auto& d : kDtypes) o.dtypes.push_back(d.type);
  } else if (auto t = ParseDtype(dtype)) {
    o.dtypes.push_back(*t);
  } else {
    return usage("unknown datatype '" + dtype + "'");
  }
  if (redop == "all") {
    for (int i = 0; i < weftNumOps; ++i) o.redops.push_back(static_cast<weftRedOp_t>(i));
  } else if (auto r = ParseRedOp(redop)) {
    o.redops.push_back(*r);
  } else {
    return usage("unknown reduction '" + redop + "' (sum prod min max avg all)");
  }
  o.min_bytes = *ParseSize(minb);
  o.max_bytes = *ParseSize(maxb);
  if (o.min_bytes > o.max_bytes) return usage("--minbytes is larger than --maxbytes");
  o.check = check != 0;
  o.shared_mem = mem == "shared";
  return {o, 0};
}

}  // namespace weftbench
