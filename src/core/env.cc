#include "core/env.h"

#include <strings.h>

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "core/mutex.h"

namespace weft {
namespace {

Mutex& EnvMutex() {
  static Mutex mu;
  return mu;
}

}  // namespace

std::optional<std::string> GetEnv(const char* name) {
  MutexLock lock(&EnvMutex());
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

void SetEnvIfUnset(const char* name, const char* value) {
  MutexLock lock(&EnvMutex());
  setenv(name, value, /*overwrite=*/0);
}

Result<long long> GetEnvInt(const char* name, long long fallback) {
  auto v = GetEnv(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v->c_str(), &end, 10);
  if (errno != 0 || end == v->c_str() || *end != '\0')
    return InvalidArgument(std::string(name) + "='" + *v + "' is not an integer");
  return x;
}

Result<double> GetEnvDouble(const char* name, double fallback) {
  auto v = GetEnv(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v->c_str(), &end);
  if (errno != 0 || end == v->c_str() || *end != '\0')
    return InvalidArgument(std::string(name) + "='" + *v + "' is not a number");
  return x;
}

Result<long long> GetEnvIntInRange(const char* name, long long fallback, long long lo,
                                   long long hi) {
  auto v = GetEnv(name);
  Result<long long> x = GetEnvInt(name, fallback);
  if (!x.ok() || (x.value() >= lo && x.value() <= hi)) {
    if (x.ok() || !v) return x;
    return InvalidArgument(fmt::format("{}='{}' is not an integer (expected {} to {})", name,
                                       *v, lo, hi));
  }
  return InvalidArgument(
      fmt::format("{}='{}' is out of range (expected {} to {})", name, *v, lo, hi));
}

Result<std::string> GetEnvChoice(const char* name, std::string_view fallback,
                                 std::initializer_list<std::string_view> choices) {
  auto v = GetEnv(name);
  if (!v) return std::string(fallback);
  std::string listed;
  for (std::string_view c : choices) {
    if (c.size() == v->size() && strncasecmp(c.data(), v->data(), c.size()) == 0)
      return std::string(c);
    listed += listed.empty() ? "" : ", ";
    listed += c;
  }
  return InvalidArgument(fmt::format("{}='{}' is not one of {}", name, *v, listed));
}

Result<double> TimeoutSeconds() {
  WEFT_ASSIGN_OR_RETURN(double t, GetEnvDouble("WEFT_TIMEOUT", 300.0));
  if (!(t > 0)) return InvalidArgument("WEFT_TIMEOUT must be a positive number of seconds");
  return t;
}

}  // namespace weft
