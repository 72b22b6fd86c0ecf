// A malformed WEFT_* value read outside init's own parsers (the logger, the flight
// recorder, the device layer) still fails weftCommInitRank with the variable's name and
// value, instead of being replaced by a default or ending the process.
#include <gtest/gtest.h>

#include <string>

#include "harness.h"
#include "weft/weft.h"

namespace {

using weft::testing::ScopedEnv;

struct BadValue {
  const char* name;
  const char* value;
};

class EnvErrorTest : public ::testing::TestWithParam<BadValue> {};

TEST_P(EnvErrorTest, InitFailsNamingTheVariable) {
  const BadValue& bad = GetParam();
  ScopedEnv env(bad.name, bad.value);
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess) << weftGetLastError(nullptr);
  weftComm_t comm = nullptr;
  weftResult_t res = weftCommInitRank(&comm, 1, id, 0);
  ASSERT_EQ(res, weftInvalidArgument) << bad.name << "=" << bad.value;
  const std::string why = weftGetLastError(nullptr);
  EXPECT_NE(why.find(bad.name), std::string::npos) << why;
  EXPECT_NE(why.find(std::string("'") + bad.value + "'"), std::string::npos) << why;
}

INSTANTIATE_TEST_SUITE_P(Malformed, EnvErrorTest,
                         ::testing::Values(BadValue{"WEFT_DEBUG", "bogus"},
                                           BadValue{"WEFT_FLIGHT_RECORDER_ENTRIES", "abc"},
                                           BadValue{"WEFT_FLIGHT_RECORDER_ENTRIES", "0"},
                                           BadValue{"WEFT_CUDA", "maybe"}));

}  // namespace
