// Planner::Create (sched/planner.h): WEFT_ALGO text ("ring", "allreduce:ring,
// broadcast:binomial"). Input: the variable on the first line, then bytes for a world
// size, a rank and a count.
// Properties: never crashes; errors are InvalidArgument; a planner it accepts chooses,
// for every collective, an algorithm of that collective which supports the call (an
// override that cannot run falls back rather than failing).
#include <string>

#include "fuzz_util.h"
#include "sched/planner.h"

using namespace weft::sched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  const std::string text(in.Until('\n'));
  auto planner = Planner::Create(text);
  if (!planner.ok()) {
    WEFT_FUZZ_CHECK(planner.status().code() == weft::Code::kInvalidArgument);
    return 0;
  }
  PlanRequest req;
  req.spec.size = 1 + in.Byte() % 64;
  req.spec.rank = in.Byte() % req.spec.size;
  req.spec.root = in.Byte() % req.spec.size;
  req.spec.count = in.U32() % (1u << 24);
  req.elem_size = size_t{1} << (in.Byte() % 4);
  for (int c = 0; c < kNumCollectives; ++c) {
    req.spec.coll = static_cast<Collective>(c);
    auto algo = planner->Choose(req);
    WEFT_FUZZ_CHECK(algo.ok() && algo.value() != nullptr);
    WEFT_FUZZ_CHECK((*algo)->coll == req.spec.coll && (*algo)->supports(req.spec));
  }
  return 0;
}
