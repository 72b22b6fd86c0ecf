// Agreeing on the inter-host link figures (see link_figures.h).
#include "comm/link_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace weft::comm {
namespace {

// FNV-1a: stable across processes and builds (std::hash need not be).
uint64_t NameHash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool Given(const std::vector<std::string>& given, const char* key) {
  return std::find(given.begin(), given.end(), key) != given.end();
}

// The largest inter_links CostModel::Parse accepts.
constexpr int kMaxCostModelLinks = 1024;

}  // namespace

LinkReport MakeLinkReport(const std::vector<transport::UsedLink>& used) {
  LinkReport report;
  if (used.empty() || used.size() > static_cast<size_t>(kMaxReportedLinks)) return report;
  report.count = static_cast<int64_t>(used.size());
  for (size_t i = 0; i < used.size(); ++i) {
    report.links[i].name_hash = NameHash(used[i].name);
    report.links[i].mbps = used[i].mbps > 0 ? used[i].mbps : -1;
  }
  return report;
}

AgreedLinks AgreeLinks(const sched::Topology& topology, const std::vector<LinkReport>& reports) {
  AgreedLinks agreed;
  if (topology.host_of.size() != reports.size() || reports.empty()) {
    agreed.links_unknown = agreed.gbps_unknown =
        fmt::format("{} reports for {} ranks", reports.size(), topology.host_of.size());
    return agreed;
  }
  std::vector<std::vector<uint64_t>> host_links(topology.NumHosts());
  int64_t slowest = std::numeric_limits<int64_t>::max();
  // The first reason (lowest rank) is kept: every rank then logs the same one.
  auto note = [](std::string* why, std::string text) {
    if (why->empty()) *why = std::move(text);
  };
  for (size_t r = 0; r < reports.size(); ++r) {
    const LinkReport& report = reports[r];
    if (report.count < 1 || report.count > kMaxReportedLinks) {
      std::string why = report.count == -1
                            ? fmt::format("rank {} could not tell which links it uses", r)
                            : fmt::format("rank {} sent a malformed report", r);
      note(&agreed.links_unknown, why);
      note(&agreed.gbps_unknown, why);
      continue;
    }
    std::vector<uint64_t>& mine = host_links[topology.host_of[r]];
    for (int64_t i = 0; i < report.count; ++i) {
      const LinkReport::Entry& e = report.links[i];
      if (std::find(mine.begin(), mine.end(), e.name_hash) == mine.end())
        mine.push_back(e.name_hash);
      if (e.mbps < 1) {
        note(&agreed.gbps_unknown, fmt::format("rank {} does not know a link's speed", r));
      } else {
        slowest = std::min(slowest, e.mbps);
      }
    }
  }
  if (agreed.links_unknown.empty()) {
    size_t fewest = host_links[0].size();
    for (const auto& links : host_links) fewest = std::min(fewest, links.size());
    agreed.links = static_cast<int>(std::min<size_t>(fewest, kMaxCostModelLinks));
  }
  if (agreed.gbps_unknown.empty()) agreed.gbps = static_cast<double>(slowest) / 1000.0;
  return agreed;
}

sched::CostModel ApplyAgreedLinks(sched::CostModel costs, const std::vector<std::string>& given,
                                  const AgreedLinks& agreed) {
  if (agreed.links > 0 && !Given(given, "inter_links")) costs.inter_links = agreed.links;
  if (agreed.gbps > 0 && !Given(given, "inter_gbps")) costs.inter_gbps = agreed.gbps;
  return costs;
}

std::string DescribeFigureSources(const sched::CostModel& costs,
                                  const std::vector<std::string>& given,
                                  const AgreedLinks& agreed) {
  auto source = [&](const char* key, bool known, const std::string& why) -> std::string {
    if (Given(given, key)) return "WEFT_COST_MODEL";
    if (known) return "detected";
    return "default: " + why;
  };
  return fmt::format("inter_links={:g} ({}), inter_gbps={:g} ({})", costs.inter_links,
                     source("inter_links", agreed.links > 0, agreed.links_unknown),
                     costs.inter_gbps, source("inter_gbps", agreed.gbps > 0, agreed.gbps_unknown));
}

std::string DescribeUsedLinks(const std::vector<transport::UsedLink>& used) {
  if (used.empty()) return "none";
  std::string out;
  for (const transport::UsedLink& link : used) {
    if (!out.empty()) out += ", ";
    out += link.mbps > 0
               ? fmt::format("{} {:g} Gbit/s ({})", link.name, link.mbps / 1000.0, link.source)
               : fmt::format("{} speed unknown", link.name);
  }
  return out;
}

}  // namespace weft::comm
