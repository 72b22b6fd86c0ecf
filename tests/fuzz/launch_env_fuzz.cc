// DetectLaunch(EnvMap) (bootstrap/launcher_env.h): rank, world and store address from
// launcher variables (weftrun, torchrun, Open MPI, Slurm). Input: "NAME=value" lines,
// the environment. Never resolves names, so no DNS guard is needed.
// Properties: never crashes; a result is consistent (0 <= rank < world size, 0 <= local
// rank < local world size <= world size, a store host, a non-zero port, only rank 0
// hosts the store, a known launcher name); errors are InvalidArgument.
#include <string>

#include "bootstrap/launcher_env.h"
#include "fuzz_util.h"

using namespace weft::bootstrap;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  EnvMap env;
  while (!in.empty()) {
    std::string_view line = in.Until('\n');
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  auto info = DetectLaunch(env);
  if (!info.ok()) {
    WEFT_FUZZ_CHECK(info.status().code() == weft::Code::kInvalidArgument);
    return 0;
  }
  const LaunchInfo& l = info.value();
  WEFT_FUZZ_CHECK(l.launcher == "weftrun" || l.launcher == "torchrun" ||
                  l.launcher == "openmpi" || l.launcher == "slurm");
  WEFT_FUZZ_CHECK(l.world_size >= 1 && l.rank >= 0 && l.rank < l.world_size);
  WEFT_FUZZ_CHECK(l.local_world_size >= 1 && l.local_rank >= 0 &&
                  l.local_rank < l.local_world_size && l.local_world_size <= l.world_size);
  WEFT_FUZZ_CHECK(!l.store_host.empty() && l.store_port != 0);
  WEFT_FUZZ_CHECK(!l.host_store || l.rank == 0);
  return 0;
}
