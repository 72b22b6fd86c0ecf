// Registrations of one communicator: what may be registered, overlaps, handles.
#include "comm/registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "transport/shm/shared_buffer.h"

namespace weft::comm {
namespace {

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = transport::shm::SharedAlloc(1 << 16);
    ASSERT_TRUE(p.ok());
    buf_ = static_cast<char*>(p.value());
  }
  void TearDown() override { EXPECT_TRUE(transport::shm::SharedFree(buf_).ok()); }
  char* buf_ = nullptr;
};

TEST_F(RegistryTest, RegistersDisjointRangesAndFindsThem) {
  Registry reg;
  auto a = reg.Register(buf_, 1024);
  auto b = reg.Register(buf_ + 1024, 1024);  // adjacent, not overlapping
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_NE(a.value(), b.value());
  EXPECT_NE(a.value(), 0u);
  auto found = reg.Find(buf_ + 1500, 100);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, b.value());
  EXPECT_EQ(found->kind, MemoryKind::kHostShared);
  EXPECT_EQ(found->fd_offset, 1024u);
  EXPECT_GE(found->fd, 0);
  EXPECT_FALSE(reg.Find(buf_ + 1000, 100).has_value()) << "straddles two registrations";
  EXPECT_FALSE(reg.Find(buf_ + 4096, 1).has_value());
  EXPECT_TRUE(reg.Deregister(a.value()).ok());
  EXPECT_FALSE(reg.Find(buf_, 10).has_value());
  EXPECT_EQ(reg.Count(), 1u);
}

TEST_F(RegistryTest, OverlappingRangesAreRejectedFromEitherSide) {
  Registry reg;
  ASSERT_TRUE(reg.Register(buf_ + 4096, 4096).ok());
  for (auto [off, len] : std::vector<std::pair<size_t, size_t>>{
           {4096, 4096}, {4000, 200}, {8000, 500}, {5000, 10}, {0, 16384}}) {
    auto r = reg.Register(buf_ + off, len);
    ASSERT_FALSE(r.ok()) << off << "+" << len;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("overlaps registration"), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(reg.Count(), 1u);
}

TEST_F(RegistryTest, MemoryWeftCannotShareIsRejected) {
  Registry reg;
  std::vector<char> plain(4096);
  auto r = reg.Register(plain.data(), plain.size());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not in a buffer from weftMemAlloc"), std::string::npos);
  EXPECT_EQ(reg.Register(nullptr, 8).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(reg.Register(buf_, 0).status().code(), Code::kInvalidArgument);
  auto past = reg.Register(buf_ + 1000, 1 << 16);
  EXPECT_NE(past.status().message().find("run past the end"), std::string::npos);
}

TEST_F(RegistryTest, UnknownOrRepeatedDeregistrationIsAnError) {
  Registry reg;
  auto a = reg.Register(buf_, 64);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(reg.Deregister(a.value()).ok());
  Status again = reg.Deregister(a.value());
  EXPECT_EQ(again.code(), Code::kInvalidArgument);
  EXPECT_NE(again.message().find("already deregistered"), std::string::npos);
  EXPECT_EQ(reg.Deregister(12345).code(), Code::kInvalidArgument);
  // Handles are not reused: a new registration of the same range gets a new one.
  auto b = reg.Register(buf_, 64);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b.value(), a.value());
}

}  // namespace
}  // namespace weft::comm
