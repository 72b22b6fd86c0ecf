// The shipped catalog loads, covers the instances of issue 7, and every figure carries
// a defined source; malformed catalogs are rejected with a useful message.
#include "sim/catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace weft::sim {
namespace {

TEST(CatalogTest, ShippedCatalogLoadsWithSourcesForEveryFigure) {
  auto cat = LoadCatalog(DefaultCatalogPath());
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

TEST(CatalogTest, P4dModelUsesPerDirectionFigures) {
  auto cat = LoadCatalog(DefaultCatalogPath());
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
