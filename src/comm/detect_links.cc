// Detecting and agreeing on the inter-host link figures (see detect_links.h).
#include "comm/detect_links.h"

#include <fmt/format.h>

#include <algorithm>

#include "comm/link_figures.h"
#include "core/env.h"
#include "core/log.h"
#include "exec/executor.h"
#include "sched/registry.h"
#include "transport/wire.h"

namespace weft::comm {
namespace {

// Every rank's report, in rank order. The exchange runs before the communicator exists
// (its planner depends on the answer), so it drives an executor of its own with a fixed
// algorithm rather than asking the planner: Bruck's allgather, ceil(lg p) steps at any
// world size. Sequence number 0 of its own wire kind: it cannot be mistaken for a call.
Result<std::vector<LinkReport>> ExchangeReports(transport::Mesh* mesh,
                                                std::shared_ptr<const sched::Topology> topology,
                                                const LinkReport& mine, double timeout_s) {
  const int size = mesh->size();
  const sched::Algorithm* bruck = sched::FindAlgorithm(sched::Collective::kAllGather, "bruck");
  if (bruck == nullptr) return Internal("link detection: no bruck allgather registered");
  sched::CollectiveSpec spec;
  spec.coll = sched::Collective::kAllGather;
  spec.rank = mesh->rank();
  spec.size = size;
  spec.count = sizeof(LinkReport);  // uint8 elements
  spec.topology = std::move(topology);
  if (!bruck->supports(spec)) return Internal("link detection: bruck allgather unsupported");
  const sched::Schedule schedule = bruck->build(spec);
  std::vector<LinkReport> all(size);
  std::vector<unsigned char> scratch(schedule.scratch_count);
  exec::ExecContext ctx;
  ctx.dtype = DataType::kUint8;
  ctx.kind = transport::kLinkDetection;
  ctx.seq = 0;
  ctx.deadline = LazyDeadline::AfterSeconds(timeout_s);
  ctx.what = "link detection";
  exec::Executor executor(mesh);
  WEFT_RETURN_IF_ERROR(executor.Run(schedule, ctx, {&mine, all.data(), scratch.data()}));
  return all;
}

}  // namespace

Result<bool> DetectNicsFromEnv() {
  const std::string v = GetEnv("WEFT_DETECT_NICS").value_or("");
  if (v.empty() || v == "1") return true;
  if (v == "0") return false;
  return InvalidArgument(fmt::format(
      "WEFT_DETECT_NICS='{}' is not 0 (keep WEFT_COST_MODEL and the defaults) or 1 (detect)", v));
}

Result<sched::CostModel> DetectLinkFigures(transport::Mesh* mesh,
                                           std::shared_ptr<const sched::Topology> topology,
                                           const sched::CostModel& costs,
                                           const std::vector<std::string>& given, bool detect,
                                           double timeout_s, const std::string& sys_class) {
  if (topology->NumHosts() < 2) return costs;
  const bool both_given = std::count(given.begin(), given.end(), "inter_links") > 0 &&
                          std::count(given.begin(), given.end(), "inter_gbps") > 0;
  if (!detect || both_given) {
    if (mesh->rank() == 0)
      WEFT_INFO("link detection: off ({}); planner figures: {}",
                detect ? "WEFT_COST_MODEL gives inter_links and inter_gbps" : "WEFT_DETECT_NICS=0",
                costs.ToString());
    return costs;
  }
  const std::vector<transport::UsedLink> used = mesh->UsedLinks(sys_class);
  Result<std::vector<LinkReport>> reports =
      ExchangeReports(mesh, topology, MakeLinkReport(used), timeout_s);
  if (!reports.ok())
    return reports.status().WithContext(
        fmt::format("rank {}: exchanging the links each rank uses", mesh->rank()));
  const AgreedLinks agreed = AgreeLinks(*topology, reports.value());
  sched::CostModel out = ApplyAgreedLinks(costs, given, agreed);
  if (mesh->rank() == 0) {
    WEFT_INFO("link detection: {} on {}; rank 0 uses {}; planner figures: {}",
              DescribeFigureSources(out, given, agreed), topology->Describe(),
              DescribeUsedLinks(used), out.ToString());
  }
  return out;
}

}  // namespace weft::comm
