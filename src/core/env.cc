#include "core/env.h"

#include <cerrno>
#include <cstdlib>

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

Result<double> TimeoutSeconds() {
  WEFT_ASSIGN_OR_RETURN(double t, GetEnvDouble("WEFT_TIMEOUT", 300.0));
  if (!(t > 0)) return InvalidArgument("WEFT_TIMEOUT must be a positive number of seconds");
  return t;
}

}  // namespace weft
