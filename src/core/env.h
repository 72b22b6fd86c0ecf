// Reading configuration from the environment. Every variable weft reads goes through
// these helpers and is documented in docs/CONFIGURATION.md. Malformed values are
// errors (never silently ignored).
#pragma once

#include <optional>
#include <string>

#include "core/status.h"

namespace weft {

// The variable's value, or nullopt when unset or empty.
std::optional<std::string> GetEnv(const char* name);
// Parses an integer; InvalidArgument naming the variable when malformed.
Result<long long> GetEnvInt(const char* name, long long fallback);
Result<double> GetEnvDouble(const char* name, double fallback);

// WEFT_TIMEOUT in seconds (default 300): the bound on every blocking wait.
Result<double> TimeoutSeconds();

}  // namespace weft
