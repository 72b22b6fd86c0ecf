// DetectLaunch: rank, world and store address from the launcher's environment.
#include "bootstrap/launcher_env.h"

#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <optional>

#include "bootstrap/slurm_hostlist.h"

extern char** environ;

namespace weft::bootstrap {
namespace {

// The variables one launcher sets for rank and world; the store is resolved separately.
struct LauncherVars {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;  // nullptr: derived (Slurm)
  bool strict;             // a half-set pair is an error (names unique to this launcher)
};

// Open MPI comes before Slurm: under mpirun inside an allocation, SLURM_PROCID is the
// index of Open MPI's daemon, not the rank; OMPI_COMM_WORLD_* is only set by mpirun.
// torchrun's RANK alone is too generic to be an error when WORLD_SIZE is missing.
constexpr LauncherVars kLaunchers[] = {
    {"weftrun", "WEFT_RANK", "WEFT_WORLD_SIZE", "WEFT_LOCAL_RANK", "WEFT_LOCAL_WORLD_SIZE", true},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", false},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", true},
    // MPICH's and Intel MPI's Hydra (mpiexec): PMI-1/PMI-2 variables, unique to them.
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", true},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr, false},
};

// A PMIx launcher (prterun, srun --mpi=pmix) always sets PMIX_RANK, but the world size only
// through PMIx's API, which libweft does not link; these variables carry it where set.
constexpr const char* kPmixSizeVars[] = {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "WORLD_SIZE"};

std::optional<std::string> Lookup(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return std::nullopt;  // empty = unset, as GetEnv
  return it->second;
}

// A strict non-negative decimal int: no sign, spaces or suffix.
Result<long long> ParseNonNegative(const std::string& name, const std::string& v,
                                   long long max) {
  if (!v.empty() && v[0] == '-')
    return InvalidArgument(name + "='" + v + "' must not be negative");
  bool digits = !v.empty() && v.size() <= 18;
  for (char c : v) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits) return InvalidArgument(name + "='" + v + "' is not a non-negative integer");
  long long x = std::strtoll(v.c_str(), nullptr, 10);
  if (x > max) return InvalidArgument(name + "='" + v + "' is too large (max " + std::to_string(max) + ")");
  return x;
}

Result<int> IntVar(const EnvMap& env, const std::string& name, int min) {
  auto v = Lookup(env, name);
  if (!v) return InvalidArgument(name + " is not set");
  WEFT_ASSIGN_OR_RETURN(long long x, ParseNonNegative(name, *v, 1 << 30));
  if (x < min) return InvalidArgument(name + "='" + *v + "' must be >= " + std::to_string(min));
  return static_cast<int>(x);
}

Result<uint16_t> PortFrom(const std::string& name, const std::string& v) {
  WEFT_ASSIGN_OR_RETURN(long long p, ParseNonNegative(name, v, 65535));
  if (p == 0) return InvalidArgument(name + "='" + v + "' is not a usable port");
  return static_cast<uint16_t>(p);
}

// "host:port" or "[v6]:port" (port optional) -> host and port text, without resolving.
Status SplitHostPort(const std::string& name, const std::string& v, std::string* host,
                     std::string* port) {
  if (v[0] == '[') {
    size_t close = v.find(']');
    if (close == std::string::npos || close == 1)
      return InvalidArgument(name + "='" + v + "' is not [host]:port");
    *host = v.substr(1, close - 1);
    std::string rest = v.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return InvalidArgument(name + "='" + v + "': junk after ']'");
    *port = rest.empty() ? "" : rest.substr(1);
    return Status::Ok();
  }
  size_t colon = v.rfind(':');
  if (colon != std::string::npos && v.find(':') != colon) {
    *host = v;  // a bare IPv6 literal: no port
    port->clear();
  } else if (colon == std::string::npos) {
    *host = v;
    port->clear();
  } else {
    *host = v.substr(0, colon);
    *port = v.substr(colon + 1);
  }
  if (host->empty()) return InvalidArgument(name + "='" + v + "' has no host");
  return Status::Ok();
}

}  // namespace

uint16_t SlurmStorePort(long long job_id, long long step_id) {
  // 10000-29999: below Linux's ephemeral range (32768-60999 by default, where connect()
  // picks its source ports, so a store there could find its port taken by any outgoing
  // connection) and above the privileged ports. The step's last digit takes part, so up
  // to 10 steps of one job running at once get different ports.
  return static_cast<uint16_t>(10000 + (job_id % 2000) * 10 + step_id % 10);
}

namespace {

bool IsTrue(const std::optional<std::string>& v) {
  return v && (strcasecmp(v->c_str(), "true") == 0 || *v == "1");
}

// Where the store is, in order: WEFT_STORE_ADDR; MASTER_ADDR/MASTER_PORT; for Slurm the
// first node of the step with a port derived from the job id. WEFT_STORE_PORT last.
Status ResolveStore(const EnvMap& env, LaunchInfo* info) {
  std::optional<uint16_t> port;
  bool from_weft_addr = false;
  if (auto addr = Lookup(env, "WEFT_STORE_ADDR")) {
    std::string port_text;
    WEFT_RETURN_IF_ERROR(SplitHostPort("WEFT_STORE_ADDR", *addr, &info->store_host, &port_text));
    if (!port_text.empty()) {
      WEFT_ASSIGN_OR_RETURN(port, PortFrom("WEFT_STORE_ADDR", port_text));
    }
    from_weft_addr = true;
  } else if (auto master = Lookup(env, "MASTER_ADDR")) {
    info->store_host = *master;
    if (auto mp = Lookup(env, "MASTER_PORT")) {
      WEFT_ASSIGN_OR_RETURN(uint16_t p, PortFrom("MASTER_PORT", *mp));
      if (info->launcher == "torchrun" && IsTrue(Lookup(env, "TORCHELASTIC_USE_AGENT_STORE"))) {
        // torchrun's agent already serves its own TCPStore on MASTER_PORT.
        if (p == 65535)
          return InvalidArgument("MASTER_PORT=65535: weft needs MASTER_PORT+1 (torchrun's agent "
                                 "store holds MASTER_PORT)");
        p = static_cast<uint16_t>(p + 1);
      }
      port = p;
    }
  } else if (info->launcher == "slurm") {
    auto list = Lookup(env, "SLURM_STEP_NODELIST");
    if (!list) list = Lookup(env, "SLURM_JOB_NODELIST");
    if (!list)
      return InvalidArgument("slurm: no store address: set MASTER_ADDR or WEFT_STORE_ADDR "
                             "(SLURM_STEP_NODELIST and SLURM_JOB_NODELIST are not set)");
    WEFT_ASSIGN_OR_RETURN(info->store_host, FirstSlurmHost(*list));
    if (auto job = Lookup(env, "SLURM_JOB_ID")) {
      WEFT_ASSIGN_OR_RETURN(long long id, ParseNonNegative("SLURM_JOB_ID", *job, 1LL << 40));
      long long step = 0;
      if (auto st = Lookup(env, "SLURM_STEP_ID")) {
        WEFT_ASSIGN_OR_RETURN(step, ParseNonNegative("SLURM_STEP_ID", *st, 1LL << 40));
      }
      port = SlurmStorePort(id, step);
    }
  } else {
    return InvalidArgument(info->launcher + ": no store address: set WEFT_STORE_ADDR "
                           "(host:port) or MASTER_ADDR and MASTER_PORT");
  }
  if (auto override_port = Lookup(env, "WEFT_STORE_PORT")) {
    WEFT_ASSIGN_OR_RETURN(port, PortFrom("WEFT_STORE_PORT", *override_port));
  }
  if (!port) {
    const char* want = from_weft_addr ? "WEFT_STORE_ADDR has no port and WEFT_STORE_PORT"
                       : info->launcher == "slurm" && !Lookup(env, "MASTER_ADDR")
                           ? "SLURM_JOB_ID (to derive the port) and WEFT_STORE_PORT"
                           : "MASTER_PORT and WEFT_STORE_PORT";
    return InvalidArgument(info->launcher + ": no store port: " + want + " are not set");
  }
  info->store_port = *port;
  // Only weftrun serves a store itself; everywhere else rank 0 must start one.
  info->host_store = !(info->launcher == "weftrun" && from_weft_addr) && info->rank == 0;
  return Status::Ok();
}

Status FillLocal(const EnvMap& env, const LauncherVars& l, LaunchInfo* info) {
  if (Lookup(env, l.local_rank)) {
    WEFT_ASSIGN_OR_RETURN(info->local_rank, IntVar(env, l.local_rank, 0));
  }
  if (l.local_size != nullptr) {
    if (Lookup(env, l.local_size)) {
      WEFT_ASSIGN_OR_RETURN(info->local_world_size, IntVar(env, l.local_size, 1));
    } else if (Lookup(env, l.local_rank)) {
      return InvalidArgument(std::string(l.local_rank) + " is set but " + l.local_size +
                             " is not");
    }
  } else if (Lookup(env, "SLURM_NTASKS_PER_NODE")) {
    WEFT_ASSIGN_OR_RETURN(info->local_world_size, IntVar(env, "SLURM_NTASKS_PER_NODE", 1));
  } else if (auto tpn = Lookup(env, "SLURM_TASKS_PER_NODE")) {
    int node = 0;
    if (Lookup(env, "SLURM_NODEID")) {
      WEFT_ASSIGN_OR_RETURN(node, IntVar(env, "SLURM_NODEID", 0));
    }
    WEFT_ASSIGN_OR_RETURN(info->local_world_size, SlurmTasksOnNode(*tpn, node));
  }
  if (info->local_rank >= info->local_world_size)
    return InvalidArgument(std::string(l.local_rank) + "=" + std::to_string(info->local_rank) +
                           " is not below the local world size " +
                           std::to_string(info->local_world_size));
  if (info->local_world_size > info->world_size)
    return InvalidArgument("local world size " + std::to_string(info->local_world_size) +
                           " exceeds " + l.size + "=" + std::to_string(info->world_size));
  return Status::Ok();
}

// PMIX_RANK with the size from kPmixSizeVars; local rank and size are not known (0/1).
Result<LaunchInfo> DetectPmix(const EnvMap& env) {
  LaunchInfo info;
  info.launcher = "pmix";
  const char* size_var = nullptr;
  for (const char* v : kPmixSizeVars)
    if (size_var == nullptr && Lookup(env, v)) size_var = v;
  if (size_var == nullptr)
    return InvalidArgument("pmix: PMIX_RANK is set but the world size is not: none of "
                           "OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, WORLD_SIZE is set");
  WEFT_ASSIGN_OR_RETURN(info.world_size, IntVar(env, size_var, 1));
  WEFT_ASSIGN_OR_RETURN(info.rank, IntVar(env, "PMIX_RANK", 0));
  if (info.rank >= info.world_size)
    return InvalidArgument("PMIX_RANK=" + std::to_string(info.rank) + " is not below " +
                           size_var + "=" + std::to_string(info.world_size));
  WEFT_RETURN_IF_ERROR(ResolveStore(env, &info));
  return info;
}

}  // namespace

Result<LaunchInfo> DetectLaunch(const EnvMap& env) {
  for (const auto& l : kLaunchers) {
    bool has_rank = Lookup(env, l.rank).has_value();
    bool has_size = Lookup(env, l.size).has_value();
    if (!has_rank && !has_size) continue;
    if (has_rank != has_size) {
      if (!l.strict) continue;
      return InvalidArgument(std::string(l.launcher) + ": " + (has_rank ? l.rank : l.size) +
                             " is set but " + (has_rank ? l.size : l.rank) + " is not");
    }
    LaunchInfo info;
    info.launcher = l.launcher;
    WEFT_ASSIGN_OR_RETURN(info.world_size, IntVar(env, l.size, 1));
    WEFT_ASSIGN_OR_RETURN(info.rank, IntVar(env, l.rank, 0));
    if (info.rank >= info.world_size)
      return InvalidArgument(std::string(l.rank) + "=" + std::to_string(info.rank) +
                             " is not below " + l.size + "=" + std::to_string(info.world_size));
    WEFT_RETURN_IF_ERROR(FillLocal(env, l, &info));
    WEFT_RETURN_IF_ERROR(ResolveStore(env, &info));
    return info;
  }
  if (Lookup(env, "PMIX_RANK")) return DetectPmix(env);
  return InvalidArgument(
      "no launcher environment found; looked for WEFT_RANK+WEFT_WORLD_SIZE (weftrun), "
      "RANK+WORLD_SIZE (torchrun), OMPI_COMM_WORLD_RANK+OMPI_COMM_WORLD_SIZE (Open MPI), "
      "PMI_RANK+PMI_SIZE (MPICH, Intel MPI), SLURM_PROCID+SLURM_NTASKS (Slurm), PMIX_RANK "
      "(PMIx); with no launcher, start the ranks with weftrun -n N");
}

Result<LaunchInfo> DetectLaunch() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return DetectLaunch(env);
}

}  // namespace weft::bootstrap
