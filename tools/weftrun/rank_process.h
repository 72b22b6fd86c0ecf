// Starting one rank: fork + exec with its environment, its own process group, and its
// stdout/stderr on pipes that weftrun reads.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "net/socket.h"

namespace weftrun {

struct SpawnSpec {
  std::string path;                // absolute or relative path (already resolved)
  std::vector<std::string> argv;   // argv[0] included
  std::vector<std::string> env;    // complete environment, "NAME=VALUE"
};

struct RankProcess {
  pid_t pid = -1;        // also its process group id
  weft::net::Fd out;     // read end of the child's stdout
  weft::net::Fd err;     // read end of the child's stderr
};

// Forks and execs. The child is the leader of a new process group (so a signal to the
// group reaches anything it started), dies with SIGKILL if weftrun dies
// (PR_SET_PDEATHSIG), reads stdin from /dev/null, and starts with default signal
// dispositions and an empty signal mask. An exec failure shows up as exit code 127
// with a message on the child's stderr.
weft::Result<RankProcess> SpawnRank(const SpawnSpec& spec);

// Finds `name` like execvp would (names with a '/' are used as is), so a typo fails
// once, before any rank starts.
std::optional<std::string> ResolveProgram(const std::string& name);

// The current environment with `overrides` applied (later entries win).
std::vector<std::string> MergeEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides);

}  // namespace weftrun
