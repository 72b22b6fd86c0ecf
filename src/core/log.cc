#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "core/env.h"

namespace weft {
namespace {
std::atomic<int> g_rank{-1};

LogLevel ParseLevel() {
  const std::optional<std::string> env = GetEnv("WEFT_DEBUG");
  if (!env) return LogLevel::kWarn;
  const char* v = env->c_str();
  if (strcasecmp(v, "NONE") == 0) return LogLevel::kNone;
  if (strcasecmp(v, "INFO") == 0) return LogLevel::kInfo;
  if (strcasecmp(v, "TRACE") == 0) return LogLevel::kTrace;
  return LogLevel::kWarn;
}
}  // namespace

LogLevel CurrentLogLevel() {
  static const LogLevel level = ParseLevel();
  return level;
}

void SetLogRank(int rank) { g_rank.store(rank); }

void LogLine(LogLevel level, const std::string& line) {
  static const char* kNames[] = {"", "WARN", "INFO", "TRACE"};
  std::string out =
      fmt::format("weft[rank {}] {}: {}\n", g_rank.load(), kNames[static_cast<int>(level)], line);
  // One write so lines from threads and ranks do not interleave mid-line.
  fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace weft
