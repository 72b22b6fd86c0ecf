// Where the simulator's shipped data is: the instance and model catalogs (catalog/) and the
// NCCL reference model's calibration (calibration/). An installed weft-sim reads the copy
// installed beside it (<prefix>/share/weft/sim, found from the running executable's own
// path); a weft-sim run from its build tree reads the source tree's sim/.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace weft::sim {

// The path of `relative` (e.g. "catalog/instances.json") in the first of these folders that
// has it: the one installed relative to the running executable, then the source tree's.
// An error naming the file and every folder looked in when none has it.
Result<std::string> ShippedDataPath(std::string_view relative);

}  // namespace weft::sim
