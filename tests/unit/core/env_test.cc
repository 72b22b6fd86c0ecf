// The strict environment parsers (core/env.h): every malformed value is an error that
// names the variable, the value and what is accepted.
#include "core/env.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/log.h"

namespace weft {
namespace {

constexpr const char* kVar = "WEFT_ENV_TEST_VALUE";

class EnvTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv(kVar); }
  void Set(const char* v) { setenv(kVar, v, 1); }
};

TEST_F(EnvTest, IntInRange) {
  EXPECT_EQ(GetEnvIntInRange(kVar, 64, 1, 100).value(), 64);  // unset
  Set("7");
  EXPECT_EQ(GetEnvIntInRange(kVar, 64, 1, 100).value(), 7);
  Set("100");
  EXPECT_EQ(GetEnvIntInRange(kVar, 64, 1, 100).value(), 100);
  for (const char* bad : {"abc", "12x", "0", "101", "-1", "99999999999999999999999"}) {
    Set(bad);
    Result<long long> r = GetEnvIntInRange(kVar, 64, 1, 100);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(kVar), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("1 to 100"), std::string::npos) << r.status().message();
  }
}

TEST_F(EnvTest, Choice) {
  EXPECT_EQ(GetEnvChoice(kVar, "WARN", {"NONE", "WARN", "INFO"}).value(), "WARN");
  Set("info");  // case does not matter; the canonical spelling comes back
  EXPECT_EQ(GetEnvChoice(kVar, "WARN", {"NONE", "WARN", "INFO"}).value(), "INFO");
  for (const char* bad : {"bogus", "INFOX", "INF", " INFO"}) {
    Set(bad);
    Result<std::string> r = GetEnvChoice(kVar, "WARN", {"NONE", "WARN", "INFO"});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(),
              fmt::format("{}='{}' is not one of NONE, WARN, INFO", kVar, bad));
  }
}

TEST_F(EnvTest, BooleanChoiceAcceptsOnlyZeroAndOne) {
  for (const char* bad : {"maybe", "yes", "2", "on"}) {
    Set(bad);
    EXPECT_FALSE(GetEnvChoice(kVar, "1", {"0", "1"}).ok()) << bad;
  }
  Set("0");
  EXPECT_EQ(GetEnvChoice(kVar, "1", {"0", "1"}).value(), "0");
}

}  // namespace
}  // namespace weft
