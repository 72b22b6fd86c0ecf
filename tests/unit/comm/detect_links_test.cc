// WEFT_DETECT_NICS: on unless "0"; anything else is an error naming the variable.
#include "comm/detect_links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

namespace weft::comm {
namespace {

class DetectNicsEnv : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("WEFT_DETECT_NICS"); }
  static Result<bool> With(const char* value) {
    ::setenv("WEFT_DETECT_NICS", value, 1);
    return DetectNicsFromEnv();
  }
};

TEST_F(DetectNicsEnv, OnUnlessZero) {
  ::unsetenv("WEFT_DETECT_NICS");
  EXPECT_EQ(DetectNicsFromEnv().value(), true);
  EXPECT_EQ(With("").value(), true);
  EXPECT_EQ(With("1").value(), true);
  EXPECT_EQ(With("0").value(), false);
}

TEST_F(DetectNicsEnv, OtherValuesAreErrors) {
  for (const char* bad : {"yes", "2", " 0", "off", "-1"}) {
    Result<bool> r = With(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_THAT(r.status().message(), ::testing::HasSubstr("WEFT_DETECT_NICS"));
  }
}

}  // namespace
}  // namespace weft::comm
