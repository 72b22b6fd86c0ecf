// What the peer benchmarks (Open MPI, Gloo) share with weft-bench, so that their numbers
// compare one to one: the collectives and their busbw factors (nccl-tests conventions,
// /work/shared/reference/collective-costs.md), the size sweep with weft-bench's rounding,
// the timing rule and the JSON record that bench/peers/merge.py reads.
//
// Header-only so that each peer program stays one file against its library (and the size
// parser every weft tool shares, tools/common/byte_size.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_size.h"

namespace peerbench {

// A collective as weft-bench sizes it: `per_rank` collectives have a total size
// S = count x typesize x nranks (count is one rank's share), the others S = count x typesize.
struct Op {
  const char* name;
  bool per_rank;
  double (*bus_factor)(int nranks);
};

inline double One(int) { return 1.0; }
inline double AllReduceFactor(int n) { return 2.0 * (n - 1) / n; }
inline double PerRankFactor(int n) { return static_cast<double>(n - 1) / n; }

inline const std::vector<Op>& Ops() {
  static const std::vector<Op> ops = {
      {"allreduce", false, AllReduceFactor}, {"reduce", false, One},
      {"broadcast", false, One},             {"allgather", true, PerRankFactor},
      {"reducescatter", true, PerRankFactor}, {"alltoall", true, PerRankFactor},
      {"gather", true, PerRankFactor},       {"scatter", true, PerRankFactor},
  };
  return ops;
}

inline const Op* FindOp(std::string_view name) {
  for (const auto& op : Ops())
    if (name == op.name) return &op;
  return nullptr;
}

struct Options {
  std::vector<const Op*> ops;
  size_t min_bytes = 8, max_bytes = 16u << 20;
  double step_factor = 2.0;
  int iters = 20, warmup_iters = 5;
  std::string json_path;
};

// -o a,b,c|all -b SIZE -e SIZE -f F -n N -w N --json FILE: -o lists the collectives (weft-bench
// takes them as --collective; its -o is nccl-tests' reduction).
// Exits with status 2 on a usage error, after printing it on rank 0 only.
inline Options ParseOptions(int argc, char** argv, bool leader) {
  Options o;
  std::string ops = "allreduce";
  auto fail = [&](const std::string& msg) {
    if (leader) std::fprintf(stderr, "%s: %s\n", argv[0], msg.c_str());
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) fail("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "-o" || a == "--op") ops = v;
    else if (a == "-b" || a == "-e") {
      const auto bytes = weft::tools::ParseByteSize(v);
      if (!bytes) fail(a + " '" + v + "' is not a size: expected " + weft::tools::kByteSizeSyntax);
      (a == "-b" ? o.min_bytes : o.max_bytes) = *bytes;
    } else if (a == "-f") o.step_factor = std::atof(v.c_str());
    else if (a == "-n") o.iters = std::atoi(v.c_str());
    else if (a == "-w") o.warmup_iters = std::atoi(v.c_str());
    else if (a == "--json") o.json_path = v;
    else fail("unknown option " + a);
  }
  if (ops == "all") {
    for (const auto& op : Ops()) o.ops.push_back(&op);
  } else {
    size_t start = 0;
    while (start <= ops.size()) {
      const size_t comma = std::min(ops.find(',', start), ops.size());
      const std::string name = ops.substr(start, comma - start);
      const Op* op = FindOp(name);
      if (op == nullptr) fail("unknown collective '" + name + "'");
      o.ops.push_back(op);
      start = comma + 1;
    }
  }
  if (o.step_factor <= 1.0 || o.iters < 1 || o.warmup_iters < 0 || o.min_bytes > o.max_bytes)
    fail("bad -b/-e/-f/-n/-w");
  return o;
}

// One rank's element count for a requested total size, rounded down as weft-bench does.
inline size_t CountFor(const Op& op, size_t bytes, size_t typesize, int n) {
  return bytes / (typesize * (op.per_rank ? static_cast<size_t>(n) : 1));
}

inline size_t TotalBytes(const Op& op, size_t count, size_t typesize, int n) {
  return count * typesize * (op.per_rank ? static_cast<size_t>(n) : 1);
}

// The per-rank counts to measure: min, min*f, ... up to max, duplicates after rounding
// dropped (weft-bench's rule). Count 0 is dropped too: not every peer accepts an empty
// collective, and an empty call measures nothing but the call.
inline std::vector<size_t> Counts(const Options& o, const Op& op, size_t typesize, int n) {
  std::vector<size_t> counts;
  for (double s = static_cast<double>(o.min_bytes); s <= static_cast<double>(o.max_bytes);
       s *= o.step_factor) {
    const size_t c = CountFor(op, static_cast<size_t>(s), typesize, n);
    if (c > 0 && (counts.empty() || counts.back() != c)) counts.push_back(c);
    if (s == 0) s = 1.0 / o.step_factor;
  }
  return counts;
}

// One measured point. time_us is the slowest rank's average per iteration.
struct Row {
  std::string op;
  size_t bytes;
  double time_us;
  double busbw_gbps;
};

inline Row MakeRow(const Op& op, size_t count, size_t typesize, int n, double time_us) {
  const size_t bytes = TotalBytes(op, count, typesize, n);
  const double algbw = time_us > 0 ? static_cast<double>(bytes) / (time_us * 1e3) : 0;
  return {op.name, bytes, time_us, algbw * op.bus_factor(n)};
}

inline void PrintRow(const Row& r) {
  std::printf("%-14s %12zu %12.2f %8.3f\n", r.op.c_str(), r.bytes, r.time_us, r.busbw_gbps);
  std::fflush(stdout);
}

// Resident memory of this process in KiB (VmRSS now, VmHWM peak), as weft-bench's rss.cc
// reads it, so the RSS per rank of the three libraries compares one to one.
struct Rss {
  int64_t now = 0;
  int64_t peak = 0;
};
inline Rss ReadRss() {
  Rss r;
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) r.now = std::stoll(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) r.peak = std::stoll(line.substr(6));
  }
  return r;
}

// Per rank: {after init, at the end, peak} KiB, gathered by the caller into `all`
// (3 x nranks values, rank by rank); weft-bench's "rss_kib" shape.
inline nlohmann::json RssJson(const std::vector<int64_t>& all) {
  nlohmann::json per_rank = nlohmann::json::array();
  for (size_t i = 0; i + 2 < all.size(); i += 3)
    per_rank.push_back({{"after_init", all[i]}, {"end", all[i + 1]}, {"peak", all[i + 2]}});
  return per_rank;
}

// The same shape as weft-bench's --json results (out_of_place only), plus who ran it.
inline bool WriteJson(const Options& o, const std::string& library, const std::string& version,
                      const std::string& transport, int nranks, const std::vector<Row>& rows,
                      const std::vector<int64_t>& rss_all) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rows) {
    const double algbw = r.time_us > 0 ? static_cast<double>(r.bytes) / (r.time_us * 1e3) : 0;
    results.push_back({{"op", r.op},
                       {"size_bytes", r.bytes},
                       {"type", "float32"},
                       {"redop", "sum"},
                       {"out_of_place",
                        {{"time_us", r.time_us}, {"algbw_gbps", algbw}, {"busbw_gbps", r.busbw_gbps}}}});
  }
  nlohmann::json j = {{"library", library},
                      {"version", version},
                      {"transport", transport},
                      {"nranks", nranks},
                      {"options",
                       {{"iters", o.iters}, {"warmup_iters", o.warmup_iters},
                        {"minbytes", o.min_bytes}, {"maxbytes", o.max_bytes},
                        {"stepfactor", o.step_factor}}},
                      {"results", results},
                      {"rss_kib", RssJson(rss_all)}};
  std::ofstream out(o.json_path);
  out << j.dump(2) << "\n";
  return static_cast<bool>(out);
}

}  // namespace peerbench
