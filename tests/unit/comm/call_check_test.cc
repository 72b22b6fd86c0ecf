// WEFT_CHECK_CALLS' fingerprints: what counts as the same call, the byte encoding, and
// the error every rank reads when calls differ.
#include "comm/call_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <vector>

namespace weft::comm {
namespace {

using ::testing::HasSubstr;
using sched::Collective;

Call MakeCall(Collective coll, size_t count = 1024, DataType dtype = DataType::kFloat32,
              RedOp op = RedOp::kSum, int root = 0) {
  Call c;
  c.coll = coll;
  c.count = count;
  c.dtype = dtype;
  c.op = op;
  c.root = root;
  return c;
}

// The fingerprints of `calls` laid out as the allgather leaves them.
std::vector<uint8_t> Gathered(const std::vector<Call>& calls) {
  std::vector<uint8_t> all(calls.size() * kCallFingerprintBytes);
  for (size_t r = 0; r < calls.size(); ++r)
    EncodeFingerprint(FingerprintOf(calls[r]), all.data() + r * kCallFingerprintBytes);
  return all;
}

Status Compare(const std::vector<Call>& calls, int self = 0) {
  auto all = Gathered(calls);
  return CompareFingerprints(all.data(), static_cast<int>(calls.size()), self, 7);
}

TEST(CallCheckTest, FieldsACollectiveIgnoresDoNotCount) {
  // Broadcast has no operator, allreduce no root, a barrier neither count nor type.
  EXPECT_EQ(FingerprintOf(MakeCall(Collective::kBroadcast, 8, DataType::kInt32, RedOp::kSum, 1)),
            FingerprintOf(MakeCall(Collective::kBroadcast, 8, DataType::kInt32, RedOp::kMax, 1)));
  EXPECT_EQ(FingerprintOf(MakeCall(Collective::kAllReduce, 8, DataType::kInt32, RedOp::kSum, 0)),
            FingerprintOf(MakeCall(Collective::kAllReduce, 8, DataType::kInt32, RedOp::kSum, 3)));
  EXPECT_EQ(FingerprintOf(MakeCall(Collective::kBarrier, 8, DataType::kInt32)),
            FingerprintOf(MakeCall(Collective::kBarrier, 0, DataType::kFloat64)));
  // ...but the ones it uses do.
  EXPECT_NE(FingerprintOf(MakeCall(Collective::kReduce, 8, DataType::kInt32, RedOp::kSum, 0)),
            FingerprintOf(MakeCall(Collective::kReduce, 8, DataType::kInt32, RedOp::kSum, 1)));
  EXPECT_NE(FingerprintOf(MakeCall(Collective::kReduce, 8, DataType::kInt32, RedOp::kSum, 0)),
            FingerprintOf(MakeCall(Collective::kReduce, 8, DataType::kInt32, RedOp::kMin, 0)));
}

TEST(CallCheckTest, EncodingRoundTripsEveryField) {
  CallFingerprint f{.coll = 6, .dtype = 9, .op = 4, .root = 70000, .count = (1ull << 40) + 3};
  uint8_t bytes[kCallFingerprintBytes];
  EncodeFingerprint(f, bytes);
  EXPECT_EQ(DecodeFingerprint(bytes), f);
  f.root = -1;
  EncodeFingerprint(f, bytes);
  EXPECT_EQ(DecodeFingerprint(bytes), f);
  EXPECT_EQ(bytes[0], 6);  // little-endian on every host
}

// What the allreduce(max) of every rank's FingerprintRange leaves.
std::vector<int64_t> ReducedRange(const std::vector<Call>& calls) {
  std::vector<int64_t> out(kFingerprintRangeWords, INT64_MIN);
  for (const Call& c : calls) {
    int64_t mine[kFingerprintRangeWords];
    FingerprintRange(FingerprintOf(c), mine);
    for (size_t i = 0; i < kFingerprintRangeWords; ++i) out[i] = std::max(out[i], mine[i]);
  }
  return out;
}

TEST(CallCheckTest, TheRangeAgreesExactlyWhenTheFingerprintsDo) {
  std::vector<Call> calls(5, MakeCall(Collective::kGather, 9, DataType::kInt8, RedOp::kSum, 4));
  EXPECT_TRUE(RangeAgrees(ReducedRange(calls).data()));
  for (int field = 0; field < 5; ++field) {
    std::vector<Call> odd = calls;
    switch (field) {
      case 0: odd[3].coll = Collective::kScatter; break;
      case 1: odd[3].dtype = DataType::kUint8; break;
      case 2:  // gather has no operator: make every rank reduce, one with another op
        for (Call& c : odd) c.coll = Collective::kReduce;
        ASSERT_TRUE(RangeAgrees(ReducedRange(odd).data()));
        odd[3].op = RedOp::kMin;
        break;
      case 3: odd[3].count = 0; break;
      case 4: odd[3].root = 0; break;
    }
    EXPECT_FALSE(RangeAgrees(ReducedRange(odd).data())) << "field " << field;
    EXPECT_FALSE(Compare(odd).ok()) << "field " << field;
  }
}

TEST(CallCheckTest, AgreementIsOk) {
  std::vector<Call> calls(4, MakeCall(Collective::kAllReduce));
  EXPECT_TRUE(Compare(calls).ok());
}

TEST(CallCheckTest, TheErrorNamesTheFieldTheRanksAndTheirValues) {
  std::vector<Call> calls(4, MakeCall(Collective::kBroadcast, 64, DataType::kFloat32,
                                      RedOp::kSum, 0));
  calls[2].root = 1;
  Status s = Compare(calls, 3);
  EXPECT_EQ(s.code(), Code::kInvalidUsage);
  EXPECT_EQ(s.message(),
            "rank 3: broadcast seq 7: the ranks passed different roots: ranks 0-1,3 passed 0; "
            "rank 2 passed 1 [WEFT_CHECK_CALLS]");
}

TEST(CallCheckTest, EachFieldHasItsOwnCause) {
  auto with = [](auto change) {
    std::vector<Call> calls(3, MakeCall(Collective::kReduce));
    change(calls[1]);
    return Compare(calls).message();
  };
  EXPECT_THAT(with([](Call& c) { c.coll = Collective::kAllReduce; }),
              HasSubstr("different collectives: ranks 0,2 passed reduce; rank 1 passed allreduce"));
  EXPECT_THAT(with([](Call& c) { c.dtype = DataType::kInt32; }),
              HasSubstr("different data types: ranks 0,2 passed float32; rank 1 passed int32"));
  EXPECT_THAT(with([](Call& c) { c.op = RedOp::kMax; }),
              HasSubstr("different reduction operators: ranks 0,2 passed sum; rank 1 passed max"));
  EXPECT_THAT(with([](Call& c) { c.count = 7; }),
              HasSubstr("different counts: ranks 0,2 passed 1024; rank 1 passed 7"));
  EXPECT_THAT(with([](Call& c) { c.root = 2; }),
              HasSubstr("different roots: ranks 0,2 passed 0; rank 1 passed 2"));
}

TEST(CallCheckTest, OtherDifferingFieldsAreListed) {
  std::vector<Call> calls(2, MakeCall(Collective::kReduce));
  calls[1].count = 1;
  calls[1].root = 1;
  EXPECT_THAT(Compare(calls).message(), HasSubstr("(also different: root)"));
}

TEST(CallCheckTest, ValuesFromAPeerThatMeanNothingPrintRaw) {
  std::vector<uint8_t> all = Gathered(std::vector<Call>(2, MakeCall(Collective::kAllReduce)));
  all[kCallFingerprintBytes + 4] = 200;  // rank 1's dtype
  Status s = CompareFingerprints(all.data(), 2, 0, 1);
  EXPECT_THAT(s.message(), HasSubstr("rank 1 passed unknown value 200"));
}

TEST(CallCheckTest, ManyValuesAndRanksStayReadable) {
  std::vector<Call> calls(64, MakeCall(Collective::kAllReduce));
  for (int r = 0; r < 64; ++r) calls[r].count = r % 8;  // 8 values, 8 ranks each
  std::string msg = Compare(calls).message();
  EXPECT_THAT(msg, HasSubstr("ranks 0,8,16,24,32,40,48,56 passed 0"));
  EXPECT_THAT(msg, HasSubstr("and 4 more values"));
  EXPECT_LT(msg.size(), 400u);
}

TEST(CallCheckTest, RankListJoinsRunsAndStopsAtTheLimit) {
  EXPECT_EQ(RankList({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(RankList({3}), "3");
  EXPECT_EQ(RankList({0, 2, 4, 6}, 2), "0,2,... (4 ranks)");
}

}  // namespace
}  // namespace weft::comm
