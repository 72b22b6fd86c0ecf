// Ranks that pass different arguments to one collective, with WEFT_CHECK_CALLS=1: every
// rank fails with InvalidUsage naming the field and the rank that differs, and the
// communicator goes on working. Every field, on 2 to 5 ranks, the odd rank out in the
// middle of the world (not always the last one). Then the default (WEFT_CHECK_CALLS
// unset): different roots to each rooted collective are caught the same way.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace weft::testing {
namespace {

enum class Field { kCollective, kCount, kDtype, kOp, kRoot };

const char* Cause(Field f) {
  switch (f) {
    case Field::kCollective: return "the ranks called different collectives";
    case Field::kCount: return "the ranks passed different counts";
    case Field::kDtype: return "the ranks passed different data types";
    case Field::kOp: return "the ranks passed different reduction operators";
    case Field::kRoot: return "the ranks passed different roots";
  }
  return "?";
}

// The call every rank makes, except that `odd` changes `field`.
weftResult_t MismatchedCall(Field field, bool odd, std::vector<float>& buf, weftComm_t comm) {
  float* p = buf.data();
  const size_t n = 16;
  switch (field) {
    case Field::kCollective:
      return odd ? weftBroadcast(p, p, n, weftFloat32, 0, comm)
                 : weftAllReduce(p, p, n, weftFloat32, weftSum, comm);
    case Field::kCount: return weftAllReduce(p, p, odd ? n / 2 : n, weftFloat32, weftSum, comm);
    case Field::kDtype:  // same bytes, so only the check can tell
      return weftAllReduce(p, p, n, odd ? weftInt32 : weftFloat32, weftSum, comm);
    case Field::kOp: return weftAllReduce(p, p, n, weftFloat32, odd ? weftMax : weftSum, comm);
    case Field::kRoot: return weftBroadcast(p, p, n, weftFloat32, odd ? 1 : 0, comm);
  }
  return weftInternalError;
}

class MismatchTest : public ::testing::TestWithParam<std::tuple<Field, int>> {};

TEST_P(MismatchTest, EveryRankNamesTheFieldAndTheOddRankAndGoesOn) {
  auto [field, world] = GetParam();
  ScopedEnv check("WEFT_CHECK_CALLS", "1");
  ScopedEnv timeout("WEFT_TIMEOUT", "20");
  const int odd = world / 2;
  RunRanks(world, [&](int rank, weftComm_t comm) {
    std::vector<float> buf(16, 1.0f);
    weftResult_t res = MismatchedCall(field, rank == odd, buf, comm);
    std::string msg = weftGetLastError(comm);
    EXPECT_EQ(res, weftInvalidUsage) << "rank " << rank << ": " << msg;
    EXPECT_NE(msg.find(Cause(field)), std::string::npos) << "rank " << rank << ": " << msg;
    EXPECT_NE(msg.find("rank " + std::to_string(odd) + " passed"), std::string::npos)
        << "rank " << rank << ": " << msg;
    // Nothing moved: the buffer is untouched and the communicator still works.
    EXPECT_EQ(buf, std::vector<float>(16, 1.0f)) << "rank " << rank;
    int32_t v = rank + 1, sum = 0;
    EXPECT_EQ(weftAllReduce(&v, &sum, 1, weftInt32, weftSum, comm), weftSuccess)
        << "rank " << rank << ": " << weftGetLastError(comm);
    EXPECT_EQ(sum, world * (world + 1) / 2) << "rank " << rank;
  });
}

std::string Name(const ::testing::TestParamInfo<std::tuple<Field, int>>& info) {
  static const char* kNames[] = {"Collective", "Count", "Dtype", "Op", "Root"};
  return std::string(kNames[static_cast<int>(std::get<0>(info.param))]) + "On" +
         std::to_string(std::get<1>(info.param)) + "Ranks";
}

INSTANTIATE_TEST_SUITE_P(FieldsAndWorlds, MismatchTest,
                         ::testing::Combine(::testing::Values(Field::kCollective, Field::kCount,
                                                              Field::kDtype, Field::kOp,
                                                              Field::kRoot),
                                            ::testing::Values(2, 3, 4, 5)),
                         Name);

// The rooted collectives, with a buffer large enough for any root's role.
weftResult_t RootedCall(int coll, int root, std::vector<float>& buf, weftComm_t comm) {
  float* p = buf.data();
  switch (coll) {
    case 0: return weftBroadcast(p, p, 4, weftFloat32, root, comm);
    case 1: return weftReduce(p, p + 4, 4, weftFloat32, weftSum, root, comm);
    case 2: return weftGather(p, p + 4, 4, weftFloat32, root, comm);
    default: return weftScatter(p + 4, p, 4, weftFloat32, root, comm);
  }
}

std::string RootedName(const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
  static const char* kNames[] = {"Broadcast", "Reduce", "Gather", "Scatter"};
  return std::string(kNames[std::get<0>(info.param)]) + "On" +
         std::to_string(std::get<1>(info.param)) + "Ranks";
}

class DefaultRootCheckTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DefaultRootCheckTest, DifferentRootsAreCaughtWithoutSettingAnything) {
  auto [coll, world] = GetParam();
  ScopedEnv timeout("WEFT_TIMEOUT", "20");
  unsetenv("WEFT_CHECK_CALLS");
  const int odd = world / 2;
  RunRanks(world, [&](int rank, weftComm_t comm) {
    std::vector<float> buf(4 + 4 * world, 1.0f);
    weftResult_t res = RootedCall(coll, rank == odd ? odd : 0, buf, comm);
    std::string msg = weftGetLastError(comm);
    EXPECT_EQ(res, weftInvalidUsage) << "rank " << rank << ": " << msg;
    EXPECT_NE(msg.find("different roots"), std::string::npos) << "rank " << rank << ": " << msg;
    EXPECT_NE(msg.find("rank " + std::to_string(odd) + " passed " + std::to_string(odd)),
              std::string::npos)
        << "rank " << rank << ": " << msg;
    EXPECT_EQ(weftBarrier(comm), weftSuccess) << "rank " << rank << ": " << weftGetLastError(comm);
  });
}

INSTANTIATE_TEST_SUITE_P(RootedCollectives, DefaultRootCheckTest,
                         ::testing::Combine(::testing::Values(0, 1, 2, 3),
                                            ::testing::Values(2, 3, 4, 5)),
                         RootedName);

TEST(MismatchCheckTest, AgreeingCallsPassAndGiveTheRightResults) {
  // The check is an extra exchange under each call's sequence number: it must not disturb
  // a mix of collectives, rooted ones included.
  ScopedEnv check("WEFT_CHECK_CALLS", "1");
  RunRanks(3, [](int rank, weftComm_t comm) {
    for (int root = 0; root < 3; ++root) {
      int32_t x = rank == root ? 40 + root : -1;
      ASSERT_EQ(weftBroadcast(&x, &x, 1, weftInt32, root, comm), weftSuccess)
          << weftGetLastError(comm);
      EXPECT_EQ(x, 40 + root);
      int32_t v = rank, sum = -1;
      ASSERT_EQ(weftReduce(&v, &sum, 1, weftInt32, weftSum, root, comm), weftSuccess);
      if (rank == root) {
        EXPECT_EQ(sum, 3);
      }
    }
    EXPECT_EQ(weftBarrier(comm), weftSuccess);
  });
}

TEST(MismatchCheckTest, ABadValueIsRefusedAtInit) {
  ScopedEnv check("WEFT_CHECK_CALLS", "yes");
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  weftComm_t comm = nullptr;
  EXPECT_EQ(weftCommInitRank(&comm, 1, id, 0), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("WEFT_CHECK_CALLS"), std::string::npos)
      << weftGetLastError(nullptr);
}

}  // namespace
}  // namespace weft::testing
