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

Result<LogLevel> ParseLevel() {
  WEFT_ASSIGN_OR_RETURN(std::string v,
                        GetEnvChoice("WEFT_DEBUG", "WARN", {"NONE", "WARN", "INFO", "TRACE"}));
  if (v == "NONE") return LogLevel::kNone;
  if (v == "INFO") return LogLevel::kInfo;
  if (v == "TRACE") return LogLevel::kTrace;
  return LogLevel::kWarn;
}

// Read once: the level is consulted on every log line, and the environment is fixed by
// the time the first communicator starts.
const Result<LogLevel>& ParsedLevel() {
  static const Result<LogLevel> level = ParseLevel();
  return level;
}
}  // namespace

LogLevel CurrentLogLevel() {
  const Result<LogLevel>& level = ParsedLevel();
  return level.ok() ? level.value() : LogLevel::kWarn;
}

// Parsed again, not from the cache: init reports the value as it is now.
Status CheckLogLevelEnv() { return ParseLevel().status(); }

void SetLogRank(int rank) { g_rank.store(rank); }

void LogLine(LogLevel level, const std::string& line) {
  static const char* kNames[] = {"", "WARN", "INFO", "TRACE"};
  std::string out =
      fmt::format("weft[rank {}] {}: {}\n", g_rank.load(), kNames[static_cast<int>(level)], line);
  // One write so lines from threads and ranks do not interleave mid-line.
  fwrite(out.data(), 1, out.size(), stderr);
}

}  // namespace weft
