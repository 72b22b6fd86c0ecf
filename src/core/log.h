// Minimal leveled logging to stderr, controlled by WEFT_DEBUG (NONE, WARN, INFO, TRACE;
// default WARN). Lines are prefixed "weft[rank R] LEVEL:".
#pragma once

#include <fmt/format.h>

#include <string>

#include "core/status.h"

namespace weft {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// A malformed WEFT_DEBUG logs at WARN here (this runs from any log line, static
// initializers included, so it must not fail); communicator init reports it as an error
// through CheckLogLevelEnv.
LogLevel CurrentLogLevel();
// InvalidArgument naming WEFT_DEBUG and its value when it is not one of the levels.
Status CheckLogLevelEnv();
// Sets the rank shown in log prefixes for this process (-1: unknown).
void SetLogRank(int rank);
void LogLine(LogLevel level, const std::string& line);

template <typename... Args>
void Log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
  if (level > CurrentLogLevel()) return;
  LogLine(level, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace weft

#define WEFT_WARN(...) ::weft::Log(::weft::LogLevel::kWarn, __VA_ARGS__)
#define WEFT_INFO(...) ::weft::Log(::weft::LogLevel::kInfo, __VA_ARGS__)
#define WEFT_TRACE(...) ::weft::Log(::weft::LogLevel::kTrace, __VA_ARGS__)
