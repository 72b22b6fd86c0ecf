// The rule every rank applies to every rank's link report: fewest distinct links of any
// host, slowest link anywhere, unknown anywhere keeps the default, WEFT_COST_MODEL wins.
#include "comm/link_figures.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace weft::comm {
namespace {

using ::testing::HasSubstr;
using transport::UsedLink;

// Reports for a world laid out host by host: reports[h][i] are host h's ranks' links.
struct World {
  sched::Topology topology;
  std::vector<LinkReport> reports;
};
World Make(const std::vector<std::vector<std::vector<UsedLink>>>& hosts) {
  World w;
  std::vector<int> per_host;
  for (const auto& host : hosts) {
    per_host.push_back(static_cast<int>(host.size()));
    for (const auto& rank : host) w.reports.push_back(MakeLinkReport(rank));
  }
  w.topology = sched::Topology::Contiguous(per_host);
  return w;
}

const UsedLink kEth0{"eth0", 10000, "sysfs"};
const UsedLink kEth1{"eth1", 10000, "sysfs"};
UsedLink kEfa(int i, int64_t mbps = 100000) {
  return {"ofi:rdmap" + std::to_string(i), mbps, "libfabric"};
}

TEST(MakeLinkReport, CountsAndUnknowns) {
  EXPECT_EQ(MakeLinkReport({}).count, -1);
  EXPECT_EQ(MakeLinkReport({kEth0, kEth1}).count, 2);
  EXPECT_EQ(MakeLinkReport({UsedLink{"x", -5, ""}}).links[0].mbps, -1);
  std::vector<UsedLink> many;
  for (int i = 0; i <= kMaxReportedLinks; ++i) many.push_back(kEfa(i));
  EXPECT_EQ(MakeLinkReport(many).count, -1);  // more than a report holds: cannot tell
  many.pop_back();
  EXPECT_EQ(MakeLinkReport(many).count, kMaxReportedLinks);
  // Equal names hash equally, different ones differently.
  EXPECT_EQ(MakeLinkReport({kEth0}).links[0].name_hash, MakeLinkReport({kEth0}).links[0].name_hash);
  EXPECT_NE(MakeLinkReport({kEth0}).links[0].name_hash, MakeLinkReport({kEth1}).links[0].name_hash);
}

TEST(AgreeLinks, OneSharedNicPerHost) {
  World w = Make({{{kEth0}, {kEth0}}, {{kEth0}, {kEth0}}});
  AgreedLinks a = AgreeLinks(w.topology, w.reports);
  EXPECT_EQ(a.links, 1);  // two ranks on one NIC count it once
  EXPECT_DOUBLE_EQ(a.gbps, 10);
  EXPECT_EQ(a.links_unknown, "");
  EXPECT_EQ(a.gbps_unknown, "");
}

TEST(AgreeLinks, UnionPerHostThenFewestOfAnyHost) {
  // Host 0: each of 4 ranks on its own NIC (4 links); host 1: ranks share 2 NICs; host 2:
  // one rank with 3 rails.
  World w = Make({{{kEfa(0)}, {kEfa(1)}, {kEfa(2)}, {kEfa(3)}},
                  {{kEfa(0)}, {kEfa(1)}, {kEfa(0)}, {kEfa(1)}},
                  {{kEfa(0), kEfa(1), kEfa(2)}}});
  AgreedLinks a = AgreeLinks(w.topology, w.reports);
  EXPECT_EQ(a.links, 2);
  EXPECT_DOUBLE_EQ(a.gbps, 100);
}

TEST(AgreeLinks, SlowestLinkAnywhere) {
  World w = Make({{{kEfa(0), kEfa(1, 25000)}}, {{kEfa(0), kEfa(1)}}});
  AgreedLinks a = AgreeLinks(w.topology, w.reports);
  EXPECT_EQ(a.links, 2);
  EXPECT_DOUBLE_EQ(a.gbps, 25);
}

TEST(AgreeLinks, UnknownSpeedAnywhereKeepsTheDefaultSpeedOnly) {
  World w = Make({{{kEth0}, {kEth0}}, {{kEth0}, {UsedLink{"eth0", -1, ""}}}});
  AgreedLinks a = AgreeLinks(w.topology, w.reports);
  EXPECT_EQ(a.links, 1);
  EXPECT_EQ(a.gbps, 0);
  EXPECT_THAT(a.gbps_unknown, HasSubstr("rank 3"));
}

TEST(AgreeLinks, RankThatCannotTellMakesBothUnknown) {
  World w = Make({{{kEth0}}, {{}}, {{kEth0}}});
  AgreedLinks a = AgreeLinks(w.topology, w.reports);
  EXPECT_EQ(a.links, 0);
  EXPECT_EQ(a.gbps, 0);
  EXPECT_THAT(a.links_unknown, HasSubstr("rank 1 could not tell"));
  EXPECT_THAT(a.gbps_unknown, HasSubstr("rank 1"));
}

TEST(AgreeLinks, MalformedReportsAreUnknownNotACrash) {
  World w = Make({{{kEth0}}, {{kEth0}}});
  for (int64_t bad :
       {int64_t{0}, int64_t{-7}, int64_t{kMaxReportedLinks + 1}, INT64_MAX, INT64_MIN}) {
    std::vector<LinkReport> reports = w.reports;
    reports[1].count = bad;
    AgreedLinks a = AgreeLinks(w.topology, reports);
    EXPECT_EQ(a.links, 0) << bad;
    EXPECT_EQ(a.gbps, 0) << bad;
    EXPECT_THAT(a.links_unknown, HasSubstr("rank 1")) << bad;
  }
  // A speed that is nonsense (<= 0) is an unknown speed.
  std::vector<LinkReport> reports = w.reports;
  reports[0].links[0].mbps = INT64_MIN;
  EXPECT_EQ(AgreeLinks(w.topology, reports).gbps, 0);
  // Reports that do not match the world.
  reports.pop_back();
  AgreedLinks a = AgreeLinks(w.topology, reports);
  EXPECT_EQ(a.links, 0);
  EXPECT_EQ(a.gbps, 0);
  EXPECT_EQ(AgreeLinks(sched::Topology{}, {}).links, 0);
}

TEST(AgreeLinks, OrderOfLinksInAReportDoesNotMatter) {
  World a = Make({{{kEfa(0), kEfa(1, 50000)}}, {{kEfa(2), kEfa(3)}}});
  World b = Make({{{kEfa(1, 50000), kEfa(0)}}, {{kEfa(3), kEfa(2)}}});
  EXPECT_EQ(AgreeLinks(a.topology, a.reports).links, AgreeLinks(b.topology, b.reports).links);
  EXPECT_EQ(AgreeLinks(a.topology, a.reports).gbps, AgreeLinks(b.topology, b.reports).gbps);
}

TEST(ApplyAgreedLinks, FillsOnlyWhatTheUserDidNotGive) {
  AgreedLinks detected;
  detected.links = 4;
  detected.gbps = 100;
  std::vector<std::string> given;
  sched::CostModel env = sched::CostModel::Parse("inter_alpha_us=15", &given).value();
  EXPECT_EQ(given, std::vector<std::string>{"inter_alpha_us"});
  sched::CostModel out = ApplyAgreedLinks(env, given, detected);
  EXPECT_EQ(out.inter_links, 4);
  EXPECT_EQ(out.inter_gbps, 100);
  EXPECT_EQ(out.inter_alpha_us, 15);  // never detected
  EXPECT_EQ(out.intra_gbps, env.intra_gbps);

  env = sched::CostModel::Parse("INTER_GBPS=40, intra_gbps=200", &given).value();
  out = ApplyAgreedLinks(env, given, detected);
  EXPECT_EQ(out.inter_gbps, 40);  // explicit env wins
  EXPECT_EQ(out.inter_links, 4);
  EXPECT_THAT(DescribeFigureSources(out, given, detected),
              HasSubstr("inter_links=4 (detected), inter_gbps=40 (WEFT_COST_MODEL)"));
}

TEST(ApplyAgreedLinks, UnknownKeepsTheDefault) {
  AgreedLinks unknown;
  unknown.links_unknown = "rank 2 could not tell which links it uses";
  unknown.gbps_unknown = "rank 1 does not know a link's speed";
  const sched::CostModel defaults;
  sched::CostModel out = ApplyAgreedLinks(defaults, {}, unknown);
  EXPECT_EQ(out.inter_links, defaults.inter_links);
  EXPECT_EQ(out.inter_gbps, defaults.inter_gbps);
  EXPECT_EQ(DescribeFigureSources(out, {}, unknown),
            "inter_links=1 (default: rank 2 could not tell which links it uses), inter_gbps=10 "
            "(default: rank 1 does not know a link's speed)");
}

TEST(DescribeUsedLinks, NamesSpeedsAndSources) {
  EXPECT_EQ(DescribeUsedLinks({}), "none");
  EXPECT_EQ(DescribeUsedLinks({kEth0, UsedLink{"ofi:x", -1, ""}}),
            "eth0 10 Gbit/s (sysfs), ofi:x speed unknown");
}

}  // namespace
}  // namespace weft::comm
