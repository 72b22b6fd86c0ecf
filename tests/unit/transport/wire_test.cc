#include "transport/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace weft::transport {
namespace {

using ::testing::HasSubstr;
using testing::Header;

TEST(WireTest, DescribeNamesEveryKind) {
  const char* names[] = {"allreduce", "reduce", "broadcast", "allgather", "reducescatter",
                         "alltoall",  "gather", "scatter",   "barrier"};
  for (uint16_t k = 0; k < 9; ++k)
    EXPECT_EQ(Describe(Header(k, 1, 0, 8)).rfind(names[k], 0), 0u) << k;
  EXPECT_EQ(Describe(Header(kPointToPoint, 3, 0, 0, PackDtypeOp(0, 0))),
            "p2p seq 3 tag 0 int8/sum 0 bytes");
  // A p2p message's step field is its tag, shown as the caller's int.
  EXPECT_EQ(Describe(Header(kPointToPoint, 3, 0xffffffffu, 0, PackDtypeOp(0, 0))),
            "p2p seq 3 tag -1 int8/sum 0 bytes");
  EXPECT_EQ(Describe(Header(0, 7, 3, 4096)), "allreduce seq 7 step 3 float32/sum 4096 bytes");
  EXPECT_EQ(Describe(Header(2, 1, 0, 2, PackDtypeOp(7, 3))),
            "broadcast seq 1 step 0 bfloat16/max 2 bytes");
  // Values outside the tables still describe, never crash.
  EXPECT_THAT(Describe(Header(77, 1, 0, 0, 0xffff)), HasSubstr("kind 0x4d"));
  EXPECT_THAT(Describe(Header(77, 1, 0, 0, 0xffff)), HasSubstr("dtype_op 0xffff"));
}

TEST(WireTest, AbortFrames) {
  WireHeader h = AbortHeader(Code::kAborted, 12);
  EXPECT_TRUE(IsAbortFrame(h));
  EXPECT_EQ(h.bytes, 12u);
  EXPECT_FALSE(IsAbortFrame(Header(0, 7, 2, 4096)));
  h.magic = 0;
  EXPECT_FALSE(IsAbortFrame(h));
  EXPECT_EQ(Describe(AbortHeader(Code::kAborted, 3)).rfind("abort seq 0", 0), 0u);

  // Long causes keep their start and their end (the original failure of a forwarded one).
  std::string longer = "rank 5 failed: " + std::string(5000, 'x') + " rank 2 (pid 7) died";
  std::string text = AbortText(Unavailable(longer));
  EXPECT_EQ(text.size(), kMaxAbortText);
  EXPECT_THAT(text, HasSubstr("rank 5 failed"));
  EXPECT_THAT(text, HasSubstr("rank 2 (pid 7) died"));
  EXPECT_EQ(AbortText(Aborted("short")), "Aborted: short");

  Status st = PeerFailed(1, 0, "shm", std::string("bad\nline\x01", 9));
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(), "rank 1 was told by rank 0 (shm) that it failed: bad line ");
  EXPECT_THAT(PeerFailed(1, 0, "", "").message(), HasSubstr("(no cause given)"));
}

TEST(WireTest, CheckHeaderAcceptsTheExpectedHeader) {
  EXPECT_TRUE(CheckHeader(Header(0, 7, 2, 4096), Header(0, 7, 2, 4096), 1, 3).ok());
}

TEST(WireTest, GarbageIsProtocolError) {
  WireHeader got = Header(0, 7, 2, 4096);
  got.magic = 0xdeadbeef;
  Status s = CheckHeader(got, Header(0, 7, 2, 4096), 1, 3, "tcp 1.2.3.4:5");
  EXPECT_EQ(s.code(), Code::kProtocolError);
  EXPECT_THAT(s.message(), HasSubstr("garbage from rank 3 (tcp 1.2.3.4:5)"));
  got = Header(0, 7, 2, 4096);
  got.version = 9;
  EXPECT_EQ(CheckHeader(got, Header(0, 7, 2, 4096), 1, 3).code(), Code::kProtocolError);
}

TEST(WireTest, MismatchNamesBothHeadersAndTheCause) {
  Status s = CheckHeader(Header(2, 7, 0, 1024), Header(0, 7, 2, 4096), 1, 3);
  EXPECT_EQ(s.code(), Code::kInvalidUsage);
  EXPECT_EQ(s.message(),
            "rank 1 expected allreduce seq 7 step 2 float32/sum 4096 bytes from rank 3, but "
            "rank 3 sent broadcast seq 7 step 0 float32/sum 1024 bytes: the ranks called "
            "different collectives");
  EXPECT_THAT(CheckHeader(Header(0, 8, 2, 4096), Header(0, 7, 2, 4096), 1, 3).message(),
              HasSubstr("different calls"));
  EXPECT_THAT(
      CheckHeader(Header(0, 7, 2, 4096, PackDtypeOp(9, 0)), Header(0, 7, 2, 4096), 1, 3).message(),
      HasSubstr("different data types"));
  EXPECT_THAT(CheckHeader(Header(0, 7, 2, 4000), Header(0, 7, 2, 4096), 1, 3).message(),
              HasSubstr("different counts"));
  // A tagged receive that meets another tag: the tag is the cause, even when the sizes
  // differ too (the receive expected a later message).
  Status tag = CheckHeader(Header(kPointToPoint, 4, 7, 64), Header(kPointToPoint, 4, 9, 128), 1, 3);
  EXPECT_EQ(tag.code(), Code::kInvalidUsage);
  EXPECT_THAT(tag.message(), HasSubstr("expected p2p seq 4 tag 9 float32/sum 128 bytes"));
  EXPECT_THAT(tag.message(), HasSubstr("sent p2p seq 4 tag 7 float32/sum 64 bytes"));
  EXPECT_THAT(tag.message(), HasSubstr("another tag than the next message's"));
  EXPECT_THAT(CheckHeader(Header(0, 7, 3, 4096), Header(0, 7, 2, 4096), 1, 3).message(),
              HasSubstr("different schedules"));
  // Rooted collectives carry root + 1 in the top 16 bits of dtype_op.
  EXPECT_THAT(CheckHeader(Header(2, 7, 0, 64, PackDtypeOp(7, 0, 1)),
                          Header(2, 7, 0, 64, PackDtypeOp(7, 0, 0)), 1, 3).message(),
              HasSubstr("root 1 64 bytes: the ranks passed different roots"));
}

TEST(WireTest, RootTagIsRootPlusOneAndZeroWithoutARoot) {
  EXPECT_EQ(PackDtypeOp(7, 3) >> 16, 0u);
  EXPECT_EQ(PackDtypeOp(7, 3, 0) >> 16, 1u);
  EXPECT_EQ(PackDtypeOp(7, 3, 4095) >> 16, 4096u);
  EXPECT_EQ(PackDtypeOp(7, 3, 4095) & 0xffffu, PackDtypeOp(7, 3));
  EXPECT_THAT(Describe(Header(1, 2, 0, 8, PackDtypeOp(2, 3, 5))),
              HasSubstr("reduce seq 2 step 0 int32/max root 5 8 bytes"));
}

}  // namespace
}  // namespace weft::transport
