// Agreeing on the planner's inter-host figures (inter_links, inter_gbps) from the links
// the ranks use. Every rank must plan with the same cost model, or ranks would choose
// different algorithms for one call and wait on each other, so the figures are not
// read locally: each rank contributes one LinkReport (a fixed size, so that one
// allgather carries them all) and every rank applies the same rule to the same reports:
//
//   inter_links: per host, the distinct links its ranks use (by name, over all its
//                ranks); the fewest of any host.
//   inter_gbps:  the slowest link any rank uses.
//
// A figure that cannot be known everywhere (a rank with no link or more than it can
// report, a speed some rank does not know) stays unknown, and the planner keeps its
// value from WEFT_COST_MODEL or the default. Figures WEFT_COST_MODEL gives always win.
// Pure functions: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/cost_model.h"
#include "sched/schedule.h"
#include "transport/used_links.h"

namespace weft::comm {

// More links than any host has (tcp::kMaxRails is 16); a rank with more reports unknown.
inline constexpr int kMaxReportedLinks = 16;

// One rank's links, exchanged as raw bytes between the ranks of one job (one build, one
// architecture). Names travel as 64-bit hashes: two ranks of a host using one NIC must
// count it once, and names may be long.
struct LinkReport {
  int64_t count = -1;  // entries used in `links`; -1: this rank cannot tell
  struct Entry {
    uint64_t name_hash = 0;
    int64_t mbps = -1;  // < 1: unknown
  } links[kMaxReportedLinks];
};
static_assert(sizeof(LinkReport) == 8 + 16 * kMaxReportedLinks, "LinkReport has no padding");

// This rank's report: count -1 when `used` is empty or longer than kMaxReportedLinks.
LinkReport MakeLinkReport(const std::vector<transport::UsedLink>& used);

struct AgreedLinks {
  int links = 0;    // links per host; 0: unknown
  double gbps = 0;  // Gbit/s per link; 0: unknown
  // Why a figure is unknown ("rank 3 reports no link"), for the log; "" when known.
  std::string links_unknown, gbps_unknown;
};

// The rule above over every rank's report (reports[r] from rank r, host_of from
// `topology`). Reports that do not fit their own format (count out of range) count as
// unknown rather than failing: every rank sees the same bytes, so they agree anyway.
AgreedLinks AgreeLinks(const sched::Topology& topology, const std::vector<LinkReport>& reports);

// `costs` with the agreed figures filled in, except keys in `given` (WEFT_COST_MODEL's,
// CostModel::Parse) and unknown figures, which keep their value.
sched::CostModel ApplyAgreedLinks(sched::CostModel costs, const std::vector<std::string>& given,
                                  const AgreedLinks& agreed);

// Where each inter-host figure comes from, for the WEFT_DEBUG=INFO line:
// "inter_links=2 (detected), inter_gbps=100 (WEFT_COST_MODEL)" (unknown ones say why they
// kept the default).
std::string DescribeFigureSources(const sched::CostModel& costs,
                                  const std::vector<std::string>& given, const AgreedLinks& agreed);

// "rail0 10 Gbit/s (sysfs), ofi:rdmap16s27-rdm speed unknown" ("none" when empty).
std::string DescribeUsedLinks(const std::vector<transport::UsedLink>& used);

}  // namespace weft::comm
