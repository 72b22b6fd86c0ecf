#include "report.h"

#include <fmt/format.h>
#include <unistd.h>
#include <weft/weft.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "dtypes.h"

namespace weftbench {
namespace {

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

// nccl-tests keeps the time column 7 wide: two decimals while they fit.
std::string Time(double us) {
  return us < 1e4 ? fmt::format("{:7.2f}", us) : fmt::format("{:7.0f}", us);
}

std::string Mode(const ModeResult& m) {
  if (!m.ran) return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "N/A", "N/A", "N/A", "N/A");
  const std::string wrong = m.wrong < 0 ? "N/A" : std::to_string(m.wrong);
  return fmt::format("  {}  {:6.2f}  {:6.2f}  {:>6}", Time(m.time_us), m.algbw, m.busbw, wrong);
}

nlohmann::json ModeJson(const ModeResult& m) {
  if (!m.ran) return nullptr;
  nlohmann::json j = {{"time_us", m.time_us}, {"algbw_gbps", m.algbw}, {"busbw_gbps", m.busbw}};
  j["wrong"] = m.wrong < 0 ? nlohmann::json(nullptr) : nlohmann::json(m.wrong);
  j["algorithm"] = m.algorithm;
  return j;
}

}  // namespace

void PrintPreamble(const Options& o, int nranks) {
  std::string cmd;
  for (const auto& a : o.argv) cmd += (cmd.empty() ? "" : " ") + a;
  fmt::print("# weft-bench (weft {}): {}\n", WeftVersionString(), cmd);
  fmt::print("#  nranks {}  minBytes {}  maxBytes {}  step factor {}  warmup iters {}  "
             "iters {}  check {}\n",
             nranks, o.min_bytes, o.max_bytes, o.step_factor, o.warmup_iters, o.iters,
             o.check ? 1 : 0);
  fmt::print("#  host {}  cpu {}\n", Hostname(), CpuModel());
  // The settings that change what a call costs, so that tables from different runs can
  // be compared (e.g. the call check doubles a small rooted call; docs/BENCHMARKS.md).
  std::string env;
  for (const char* name : {"WEFT_TRANSPORT", "WEFT_ALGO", "WEFT_CHECK_CALLS", "WEFT_COST_MODEL",
                           "WEFT_SOCKET_NRAILS"}) {
    if (const char* v = std::getenv(name)) env += fmt::format("  {}={}", name, v);
  }
  fmt::print("#  environment:{}\n", env.empty() ? "  (weft defaults)" : env);
  std::fflush(stdout);
}

void PrintHeader(const std::string& op) {
  fmt::print("#\n# Collective: {}\n", op);
  fmt::print("#{:>76}{:>33}\n", "out-of-place", "in-place");
  fmt::print("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  "
             "{:>6}  {:>6}\n",
             "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
             "time", "algbw", "busbw", "#wrong");
  fmt::print("#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  "
             "{:>6}  {:>6}\n",
             "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
             "(GB/s)", "(GB/s)", "");
  std::fflush(stdout);
}

void PrintRow(const Row& r) {
  fmt::print("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}\n", r.bytes, r.count, r.type, r.redop,
             r.root, Mode(r.out_of_place), Mode(r.in_place));
  std::fflush(stdout);
}

void PrintFooter(int64_t wrong_total, bool checked, double avg_busbw,
                 const std::vector<RankRss>& rss) {
  if (checked) {
    fmt::print("# Out of bounds values : {} {}\n", wrong_total, wrong_total == 0 ? "OK" : "FAILED");
  } else {
    fmt::print("# Out of bounds values : N/A (check disabled)\n");
  }
  fmt::print("# Avg bus bandwidth    : {:g} \n", avg_busbw);
  int64_t init_max = 0, peak_max = 0;
  for (const auto& r : rss) {
    init_max = std::max(init_max, r.init_kib);
    peak_max = std::max(peak_max, r.peak_kib);
  }
  fmt::print("# RSS per rank (max)   : {:.1f} MiB after init, {:.1f} MiB peak\n#\n",
             init_max / 1024.0, peak_max / 1024.0);
  std::fflush(stdout);
}

bool WriteJson(const std::string& path, const Options& o, int nranks,
               const std::vector<Row>& rows, int64_t wrong_total, double avg_busbw,
               const std::vector<RankRss>& rss) {
  nlohmann::json j;
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[64] = {};
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  j["machine"] = {{"hostname", Hostname()},
                  {"cpu", CpuModel()},
                  {"hardware_threads", std::thread::hardware_concurrency()},
                  {"nranks", nranks},
                  {"weft_version", WeftVersionString()},
                  {"time", stamp}};
  nlohmann::json dtypes = nlohmann::json::array(), redops = nlohmann::json::array();
  for (auto t : o.dtypes) dtypes.push_back(Info(t).name);
  for (auto r : o.redops) redops.push_back(RedOpName(r));
  j["options"] = {{"ops", o.ops},           {"minbytes", o.min_bytes},
                  {"maxbytes", o.max_bytes}, {"stepfactor", o.step_factor},
                  {"datatypes", dtypes},     {"redops", redops},
                  {"iters", o.iters},        {"warmup_iters", o.warmup_iters},
                  {"check", o.check},        {"root", o.root},
                  {"argv", o.argv}};
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : rows) {
    results.push_back({{"op", r.op},
                       {"size_bytes", r.bytes},
                       {"count", r.count},
                       {"type", r.type},
                       {"redop", r.redop},
                       {"root", r.root},
                       {"out_of_place", ModeJson(r.out_of_place)},
                       {"in_place", ModeJson(r.in_place)}});
  }
  j["results"] = std::move(results);
  nlohmann::json per_rank = nlohmann::json::array();
  for (const auto& r : rss)
    per_rank.push_back({{"after_init", r.init_kib}, {"end", r.end_kib}, {"peak", r.peak_kib}});
  j["rss_kib"] = std::move(per_rank);
  j["summary"] = {{"avg_busbw_gbps", avg_busbw},
                  {"wrong", o.check ? nlohmann::json(wrong_total) : nlohmann::json(nullptr)}};
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  out.close();
  if (!out) {
    std::fprintf(stderr, "weft-bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

}  // namespace weftbench
