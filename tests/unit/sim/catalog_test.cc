// The shipped catalog loads, covers the instances of issue 7, and every figure carries
// a defined source; malformed catalogs are rejected with a useful message.
#include "sim/catalog.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace weft::sim {
namespace {

TEST(CatalogTest, ShippedCatalogLoadsWithSourcesForEveryFigure) {
  auto cat = LoadShippedCatalog();
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  for (const char* name :
       {"p3.16xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge",
        "p5e.48xlarge", "trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge", "gh200"}) {
    const Instance* inst = cat->Find(name);
    ASSERT_NE(inst, nullptr) << name;
    for (const auto& [key, fig] : inst->figures) {
      ASSERT_FALSE(fig.sources.empty()) << name << "." << key;
      for (const std::string& id : fig.sources) {
        const Source& s = cat->sources.at(id);
        EXPECT_FALSE(s.url.empty()) << id;
        EXPECT_FALSE(s.title.empty()) << id;
      }
      // Sources that disagree must say how the value was chosen.
      if (fig.status == "conflicting") {
        EXPECT_FALSE(fig.note.empty()) << name << "." << key;
      }
    }
    auto cluster = ClusterFor(*inst, 4);
    EXPECT_TRUE(cluster.ok()) << name << ": " << cluster.status().ToString();
  }
}

TEST(CatalogTest, EveryInstanceStatesEachPurchaseOption) {
  // Each purchase option is present for every instance: with a value and a dated source,
  // or null with a note that says why (never silently missing, never invented).
  auto cat = LoadShippedCatalog();
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  for (const Instance& inst : cat->instances) {
    const auto options = PriceOptions(inst);
    for (const char* option : {"on_demand", "spot", "savings_plan_1yr", "capacity_block"}) {
      ASSERT_EQ(options.count(option), 1u) << inst.name << " lacks price_" << option;
      const Figure& f = inst.figures.at(fmt::format("price_{}_usd_h", option));
      if (!f.value) {
        EXPECT_FALSE(f.note.empty()) << inst.name << ": unpublished " << option << " needs a note";
        continue;
      }
      EXPECT_GT(*f.value, 0) << inst.name << " " << option;
      if (std::string(option) == "on_demand") continue;
      bool dated = false;
      for (const std::string& id : f.sources) dated = dated || !cat->sources.at(id).date.empty();
      EXPECT_TRUE(dated) << inst.name << " " << option;
    }
  }
  // The figures looked up for this catalog (docs/SIMULATOR.md lists their sources).
  EXPECT_DOUBLE_EQ(cat->Find("p4d.24xlarge")->Get("price_capacity_block_usd_h"), 14.75);
  EXPECT_DOUBLE_EQ(cat->Find("p5.48xlarge")->Get("price_capacity_block_usd_h"), 39.33);
  EXPECT_DOUBLE_EQ(cat->Find("trn1.32xlarge")->Get("price_capacity_block_usd_h"), 15.49);
  // Dated spot observations: SkyPilot's catalog as printed on 2024-09-28 and 2022-03-01.
  EXPECT_DOUBLE_EQ(cat->Find("p4d.24xlarge")->Get("price_spot_usd_h"), 9.279);
  EXPECT_DOUBLE_EQ(cat->Find("p3.16xlarge")->Get("price_spot_usd_h"), 7.344);
  EXPECT_FALSE(PriceOptions(*cat->Find("p3.16xlarge")).at("capacity_block").has_value());
}

TEST(CatalogTest, PriceOptionsAreTheFiguresNamedPrice) {
  Instance inst;
  inst.figures["price_on_demand_usd_h"].value = 10;
  inst.figures["price_spot_usd_h"].value = std::nullopt;
  inst.figures["pricey_usd_h"].value = 1;  // not price_*: ignored
  inst.figures["price_usd_h"].value = 1;   // no option name: ignored
  inst.figures["hbm_gb"].value = 80;
  const auto options = PriceOptions(inst);
  ASSERT_EQ(options.size(), 2u);
  EXPECT_DOUBLE_EQ(*options.at("on_demand"), 10);
  EXPECT_FALSE(options.at("spot").has_value());
}

TEST(CatalogTest, P4dModelUsesPerDirectionFigures) {
  auto cat = LoadShippedCatalog();
  ASSERT_TRUE(cat.ok());
  auto c = ClusterFor(*cat->Find("p4d.24xlarge"), 2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ranks(), 16);
  EXPECT_DOUBLE_EQ(c->intra_bytes_per_s, 300e9);  // 600 GB/s bidirectional
  EXPECT_DOUBLE_EQ(c->nic_bytes_per_s, 12.5e9);   // 400 Gbit/s over 4 NICs
  EXPECT_DOUBLE_EQ(c->reduce_s_per_byte, 3.0 / 1555e9);
}

std::string WriteTemp(const std::string& text) {
  char name[] = "/tmp/weft_sim_catalog_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(CatalogTest, RejectsAFigureWithoutSources) {
  const std::string path = WriteTemp(R"({"sources": {"a": {"title": "t", "url": "u"}},
    "instances": [{"name": "x", "figures": {"accelerators": {"value": 8, "sources": [],
    "status": "verified"}}}]})");
  auto cat = LoadCatalog(path);
  std::remove(path.c_str());
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.status().message().find("x.accelerators"), std::string::npos);
}

TEST(CatalogTest, RejectsAnUndefinedSourceAndBadJson) {
  const std::string path = WriteTemp(R"({"sources": {}, "instances": [{"name": "x",
    "figures": {"nics": {"value": 1, "sources": ["nowhere"], "status": "cited"}}}]})");
  auto cat = LoadCatalog(path);
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.status().message().find("nowhere"), std::string::npos);
  std::ofstream(path) << "{ not json";
  EXPECT_FALSE(LoadCatalog(path).ok());
  std::remove(path.c_str());
}

TEST(CatalogTest, RejectsAnUndatedSpotPrice) {
  // Spot and reserved prices move; a value without a dated source is rejected, while an
  // undated on-demand price (list price) and an undated null are accepted.
  const std::string figures = R"("accelerators": {"value": 8, "sources": ["a"], "status": "cited"},
    "tflops_dense_bf16": {"value": 1, "sources": ["a"], "status": "cited"},
    "hbm_gb": {"value": 1, "sources": ["a"], "status": "cited"},
    "hbm_gbps": {"value": 1, "sources": ["a"], "status": "cited"},
    "intra_gbps_bidir": {"value": 1, "sources": ["a"], "status": "cited"},
    "nics": {"value": 1, "sources": ["a"], "status": "cited"},
    "network_gbit": {"value": 1, "sources": ["a"], "status": "cited"},
    "price_on_demand_usd_h": {"value": 10, "sources": ["a"], "status": "cited"},
    "price_savings_plan_1yr_usd_h": {"value": null, "sources": ["a"], "status": "cited"},
    "alpha_intra_us": {"value": 1, "sources": ["a"], "status": "assumed"},
    "alpha_inter_us": {"value": 1, "sources": ["a"], "status": "assumed"},)";
  const std::string sources =
      R"("sources": {"a": {"title": "t", "url": "u"}, "d": {"title": "t", "url": "u", "date": "2024-04-23"}})";
  const std::string undated =
      WriteTemp("{" + sources + R"(, "instances": [{"name": "x", "figures": {)" + figures +
                R"("price_spot_usd_h": {"value": 3, "sources": ["a"], "status": "cited"}}}]})");
  auto bad = LoadCatalog(undated);
  std::remove(undated.c_str());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.price_spot_usd_h"), std::string::npos);
  const std::string dated = WriteTemp(
      "{" + sources + R"(, "instances": [{"name": "x", "figures": {)" + figures +
      R"("price_spot_usd_h": {"value": 3, "sources": ["a", "d"], "status": "cited"}}}]})");
  auto good = LoadCatalog(dated);
  std::remove(dated.c_str());
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->sources.at("d").date, "2024-04-23");
}

TEST(CatalogTest, RejectsAMissingRequiredFigure) {
  const std::string path = WriteTemp(R"({"sources": {"a": {"title": "t", "url": "u"}},
    "instances": [{"name": "x", "figures": {"nics": {"value": 1, "sources": ["a"],
    "status": "cited"}}}]})");
  auto cat = LoadCatalog(path);
  std::remove(path.c_str());
  ASSERT_FALSE(cat.ok());
  EXPECT_NE(cat.status().message().find("lacks figure"), std::string::npos);
}

}  // namespace
}  // namespace weft::sim
