// Which key authenticates this job's connections (net/auth.h), by bootstrap path:
//   WEFT_SECRET set (non-empty)  the key is derived from it, whatever the path. weftrun
//                                sets it for its ranks (32 random bytes, hex) unless the
//                                user already did, so every job under weftrun is
//                                authenticated without configuration.
//   unique id                    weftGetUniqueId puts a random secret in the id; the key
//                                is derived from it (the id travels the user's channel).
//   torchrun/Slurm/Open MPI env  no secret channel exists: the key is derived from the
//                                job's identity (launcher, store address, job id). That
//                                keeps strays from other jobs out, but anyone who can
//                                read the job's environment can compute it: not a
//                                security boundary (docs/RELIABILITY.md). Logged once at
//                                INFO.
#pragma once

#include <string>
#include <string_view>

#include "bootstrap/launcher_env.h"
#include "net/auth.h"

namespace weft::bootstrap {

// The key a secret string gives (WEFT_SECRET, weftrun's, or a unique id's).
net::AuthKey KeyFromSecret(std::string_view secret);

// WEFT_SECRET's key when set, else `fallback_secret`'s.
net::AuthKey KeyFromEnvOrSecret(std::string_view fallback_secret);

// For the environment bootstrap: WEFT_SECRET's key when set, else the job-identity key
// of `info` and the launchers' job ids in `env`.
net::AuthKey KeyForLaunch(const LaunchInfo& info, const EnvMap& env);
net::AuthKey KeyForLaunch(const LaunchInfo& info);  // from the real environment

// A fresh random secret: 2 * `bytes` hex digits.
Result<std::string> NewSecret(size_t bytes);

}  // namespace weft::bootstrap
