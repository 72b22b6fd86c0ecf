// Reading configuration from the environment. Every variable weft reads goes through
// these helpers and is documented in docs/CONFIGURATION.md. Malformed values are
// errors (never silently ignored).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace weft {

// The variable's value, or nullopt when unset or empty.
std::optional<std::string> GetEnv(const char* name);
// Sets `name` to `value` unless it is already set (the user's setting wins). setenv(3)
// may move the environment while another thread's getenv(3) walks it, so weft's own
// reads (GetEnv) and writes (this) take one process-wide lock: ranks run as threads of
// one process in tests and in multi-communicator programs.
void SetEnvIfUnset(const char* name, const char* value);
// Parses an integer; InvalidArgument naming the variable when malformed.
Result<long long> GetEnvInt(const char* name, long long fallback);
Result<double> GetEnvDouble(const char* name, double fallback);
// An integer in [lo, hi]; InvalidArgument naming the variable, the value and the range
// otherwise.
Result<long long> GetEnvIntInRange(const char* name, long long fallback, long long lo,
                                   long long hi);
// One of `choices` (compared ignoring ASCII case; returned as spelled in `choices`), or
// `fallback` when unset; InvalidArgument naming the variable, the value and every choice
// otherwise.
Result<std::string> GetEnvChoice(const char* name, std::string_view fallback,
                                 std::initializer_list<std::string_view> choices);

// WEFT_TIMEOUT in seconds (default 300): the bound on every blocking wait.
Result<double> TimeoutSeconds();

}  // namespace weft
