#include "bootstrap/job_key.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "core/env.h"
#include "core/log.h"
#include "core/random_bytes.h"

namespace weft::bootstrap {
namespace {

constexpr std::string_view kSecretLabel = "weft-secret-v1";
constexpr std::string_view kIdentityLabel = "weft-job-identity-v1";

// The variables that name a job run; whichever the launcher sets are part of the
// identity, so two runs of one script on the same store port get different keys.
constexpr const char* kJobIdVars[] = {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "SLURM_STEP_ID",
                                      "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"};

std::optional<std::string> SecretFromEnv() {
  auto s = GetEnv("WEFT_SECRET");
  if (s && s->empty()) return std::nullopt;
  return s;
}

}  // namespace

net::AuthKey KeyFromSecret(std::string_view secret) {
  return net::DeriveAuthKey(kSecretLabel, secret);
}

net::AuthKey KeyFromEnvOrSecret(std::string_view fallback_secret) {
  auto s = SecretFromEnv();
  return KeyFromSecret(s ? std::string_view(*s) : fallback_secret);
}

net::AuthKey KeyForLaunch(const LaunchInfo& info, const EnvMap& env) {
  auto it = env.find("WEFT_SECRET");
  if (it != env.end() && !it->second.empty()) return KeyFromSecret(it->second);
  std::string identity = fmt::format("{}|{}|{}", info.launcher, info.store_host, info.store_port);
  for (const char* var : kJobIdVars) {
    auto v = env.find(var);
    identity += fmt::format("|{}={}", var, v == env.end() ? "" : v->second);
  }
  static std::once_flag logged;
  std::call_once(logged, [&] {
    WEFT_INFO(
        "WEFT_SECRET is not set: connections are authenticated with a key derived from the "
        "job's identity ({} store {}:{}), which keeps other jobs out but is not a security "
        "boundary (see docs/RELIABILITY.md)",
        info.launcher, info.store_host, info.store_port);
  });
  return net::DeriveAuthKey(kIdentityLabel, identity);
}

net::AuthKey KeyForLaunch(const LaunchInfo& info) {
  EnvMap env;
  if (auto s = SecretFromEnv()) env["WEFT_SECRET"] = *s;
  for (const char* var : kJobIdVars)
    if (auto v = GetEnv(var)) env[var] = *v;
  return KeyForLaunch(info, env);
}

Result<std::string> NewSecret(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  WEFT_RETURN_IF_ERROR(RandomBytes(raw.data(), raw.size()));
  std::string hex;
  for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
  return hex;
}

}  // namespace weft::bootstrap
