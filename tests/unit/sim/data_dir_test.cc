// The simulator's shipped data is found (here: the source tree's, the test binary being
// in no install), and a file in none of the folders is an error that names them.
#include "sim/data_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace weft::sim {
namespace {

TEST(DataDirTest, FindsTheShippedCatalogAndCalibration) {
  for (const char* file : {"catalog/instances.json", "catalog/models.json",
                           "calibration/published.csv", "calibration/nccl_figures.json"}) {
    Result<std::string> path = ShippedDataPath(file);
    ASSERT_TRUE(path.ok()) << path.status().ToString();
    EXPECT_TRUE(std::filesystem::is_regular_file(*path)) << *path;
    EXPECT_EQ(path->substr(path->size() - std::string(file).size()), file);
  }
}

TEST(DataDirTest, AMissingFileNamesEveryFolderLookedIn) {
  Result<std::string> path = ShippedDataPath("catalog/no-such-file.json");
  ASSERT_FALSE(path.ok());
  const std::string msg = path.status().ToString();
  EXPECT_NE(msg.find("catalog/no-such-file.json"), std::string::npos) << msg;
  // The install folder beside this binary (share/weft/sim), then the source tree's sim/.
  EXPECT_NE(msg.find("share/weft/sim"), std::string::npos) << msg;
  const std::string source = std::filesystem::path(ShippedDataPath("catalog/models.json").value())
                                 .parent_path().parent_path().string();
  EXPECT_NE(msg.find(source), std::string::npos) << msg;
}

}  // namespace
}  // namespace weft::sim
