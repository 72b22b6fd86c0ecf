// The ofi transport over libfabric's tcp;ofi_rxm provider on loopback: ranks as threads
// of one process, each with its own endpoint (as separate processes would have).
#ifdef WEFT_HAVE_OFI

#include "transport/ofi/ofi_link.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <poll.h>

#include <cstdlib>
#include <thread>

#include "test_util.h"
#include "transport/card.h"
#include "transport/mesh.h"
#include "transport/rail_link.h"

namespace weft::transport::ofi {
namespace {

using ::testing::HasSubstr;
using transport::testing::Header;
using transport::testing::Pattern;
using transport::testing::Pump;
using transport::testing::RunRanks;
using transport::testing::ThreadAllGather;
using transport::testing::UniqueCommId;

class OfiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WEFT_OFI_PROVIDER", "tcp;ofi_rxm", 1);
    unsetenv("WEFT_OFI_MR");
    unsetenv("WEFT_OFI_PREPOST");
    unsetenv("WEFT_OFI_EAGER");
    unsetenv("WEFT_OFI_NRAILS");
  }
  void TearDown() override {
    unsetenv("WEFT_OFI_EAGER");
    unsetenv("WEFT_OFI_NRAILS");
  }
};

// The link's eager size, as Mesh gives it: the smaller of the two ranks' offers.
uint64_t PairEager(const std::shared_ptr<OfiEndpoint> (&ep)[2]) {
  return std::min(ep[0]->limits().eager_bytes, ep[1]->limits().eager_bytes);
}

// Two endpoints joined by links by hand (no Mesh), optionally with small chunks.
struct Pair {
  std::shared_ptr<OfiEndpoint> ep[2];
  std::unique_ptr<OfiLink> link[2];  // link[r]: rank r's link to the other rank
};

Pair MakePair(uint64_t max_chunk = 0) {
  Pair p;
  for (int r = 0; r < 2; ++r) {
    auto e = OfiEndpoint::Open(r);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    if (!e.ok()) return p;
    p.ep[r] = e.value();
    if (max_chunk) p.ep[r]->set_max_chunk_for_test(max_chunk);
  }
  std::vector<std::vector<uint8_t>> addrs = {p.ep[0]->address(), p.ep[1]->address()};
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(p.ep[r]->InsertPeers(addrs).ok());
    p.link[r] = std::make_unique<OfiLink>(r, 1 - r, p.ep[r], PairEager(p.ep));
  }
  return p;
}

TEST_F(OfiTest, TagsKeepRanksAndSequencesApart) {
  EXPECT_NE(OfiLink::Tag(1, 0, 40), OfiLink::Tag(0, 1, 40));
  EXPECT_EQ(OfiLink::Tag(3, 5, 40), (uint64_t{3} << 40) | 5);
  EXPECT_NE(OfiLink::ControlTag(3, 40), OfiLink::Tag(3, 0, 40));
  EXPECT_NE(OfiLink::ControlTag(3, 40) & (uint64_t{1} << 63), 0u);
}

TEST_F(OfiTest, OpensTheRequestedProvider) {
  auto e = OfiEndpoint::Open(0);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)->provider(), "tcp;ofi_rxm");
  EXPECT_FALSE((*e)->address().empty());
  EXPECT_EQ((*e)->limits().staged_eager_bytes, 8192u);
  EXPECT_GT((*e)->limits().max_chunk, (*e)->limits().staged_eager_bytes);
  // Over rxm/tcp a rank sends from and receives into the user's buffer both ways, so it
  // takes 1 MiB inside the header's message: an op up to that is one message, and the
  // overflow sink takes as much.
  EXPECT_EQ((*e)->limits().eager_bytes, 1u << 20);
  EXPECT_EQ((*e)->overflow_sink_bytes(), 1u << 20);
}

TEST_F(OfiTest, EagerSizeFollowsHowTheRankMovesPayloadsAndTheEnvironment) {
  // Through staging on either side (receives posted after the header, or registered
  // buffers): what a staging buffer holds. WEFT_OFI_EAGER lowers it, never raises it.
  struct Case {
    const char* prepost;
    const char* mr;
    const char* eager;
    uint64_t want;
  };
  for (const Case& c : {Case{"0", "0", nullptr, 8192}, Case{"1", "1", nullptr, 8192},
                        Case{"1", "0", "65536", 65536}, Case{"1", "0", "0", 0},
                        Case{"0", "0", "100000000", 8192}}) {
    setenv("WEFT_OFI_PREPOST", c.prepost, 1);
    setenv("WEFT_OFI_MR", c.mr, 1);
    if (c.eager) setenv("WEFT_OFI_EAGER", c.eager, 1); else unsetenv("WEFT_OFI_EAGER");
    auto e = OfiEndpoint::Open(0);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ((*e)->limits().eager_bytes, c.want)
        << "prepost " << c.prepost << " mr " << c.mr << " eager " << (c.eager ? c.eager : "-");
  }
  unsetenv("WEFT_OFI_MR");
  setenv("WEFT_OFI_EAGER", "-1", 1);
  auto e = OfiEndpoint::Open(0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr("WEFT_OFI_EAGER=-1"));
}

TEST_F(OfiTest, UnknownProviderIsAnErrorNamingIt) {
  setenv("WEFT_OFI_PROVIDER", "no_such_provider", 1);
  auto e = OfiEndpoint::Open(0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(e.status().message(), HasSubstr("WEFT_OFI_PROVIDER='no_such_provider'"));
  EXPECT_THAT(e.status().message(), HasSubstr("fi_getinfo"));
}

// Many messages queued both ways at once, of sizes around the eager limit and over
// several chunks, each checked byte for byte; ops complete in FIFO order.
void ExchangeMany(Pair& p) {
  // Around the link's eager size where it is small; sizes up to 3 MiB either way.
  const uint64_t eager = std::min<uint64_t>(p.link[0]->eager_bytes(), 8192);
  const std::vector<size_t> sizes = {0,         1,         31,           eager - 1, eager,
                                     eager + 1, 100000,    (1 << 20) + 3, 7,         3 << 20};
  std::vector<Status> errors(2);
  std::vector<int> bad(2, 0);
  RunRanks(2, [&](int r) {
    const int reps = 20;
    std::vector<std::vector<uint8_t>> out, in;
    std::vector<SendOp> sends(sizes.size() * reps);
    std::vector<RecvOp> recvs(sizes.size() * reps);
    for (int k = 0; k < reps; ++k) {
      for (size_t i = 0; i < sizes.size(); ++i) {
        out.push_back(Pattern(r + k, 1 - r, sizes[i]));
        in.emplace_back(sizes[i], 0);
      }
    }
    Link* l = p.link[r].get();
    for (size_t j = 0; j < sends.size(); ++j) {
      size_t size = sizes[j % sizes.size()];
      sends[j] = SendOp{Header(0, j, 0, size), out[j].data()};
      recvs[j] = RecvOp{Header(0, j, 0, size), in[j].data()};
      l->PostSend(&sends[j]);
      l->PostRecv(&recvs[j]);
    }
    errors[r] = Pump({l}, Deadline::AfterSeconds(60));
    for (size_t j = 0; j < sends.size(); ++j) {
      int k = static_cast<int>(j / sizes.size());
      if (!sends[j].done || !recvs[j].done || in[j] != Pattern(1 - r + k, r, sizes[j % sizes.size()]))
        ++bad[r];
    }
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(errors[r].ok()) << errors[r].ToString();
    EXPECT_EQ(bad[r], 0) << "rank " << r;
  }
}

TEST_F(OfiTest, ManyMessagesBothWays) {
  // Over rxm/tcp every op up to 1 MiB is one message; the 3 MiB ones a header message,
  // then one chunk.
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  ASSERT_EQ(p.link[0]->eager_bytes(), 1u << 20);
  ExchangeMany(p);
}

TEST_F(OfiTest, PayloadsSplitIntoChunks) {
  setenv("WEFT_OFI_EAGER", "8192", 1);  // over it, a header message then chunks
  Pair p = MakePair(/*max_chunk=*/65536);
  ASSERT_TRUE(p.link[1]);
  ASSERT_EQ(p.link[0]->eager_bytes(), 8192u);
  ExchangeMany(p);
}


TEST_F(OfiTest, EagerPayloadsAreNeitherCopiedInNorOutOverRxmTcp) {
  // The default here: an eager payload is sent from the user's buffer (second iovec of
  // the header's message) and received straight into it. Without pre-posted payloads it
  // is received into staging and copied out only once the header has been checked.
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  EXPECT_TRUE(p.ep[0]->limits().send_iov);
  EXPECT_TRUE(p.ep[0]->limits().recv_iov);
  EXPECT_NE(p.ep[0]->overflow_sink(), nullptr);
  setenv("WEFT_OFI_PREPOST", "0", 1);
  auto e = OfiEndpoint::Open(0);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_FALSE((*e)->limits().recv_iov);
}

TEST_F(OfiTest, ManyMessagesBothWaysReceivedThroughStaging) {
  setenv("WEFT_OFI_PREPOST", "0", 1);
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  ASSERT_FALSE(p.ep[0]->limits().recv_iov);
  ExchangeMany(p);
}

TEST_F(OfiTest, PrepostOnOneRankOnlyStillMovesEveryMessage) {
  // Receiving in place or through staging is each rank's own business: the wire is
  // the same, so ranks with different WEFT_OFI_PREPOST still agree.
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  setenv("WEFT_OFI_PREPOST", "0", 1);
  auto e = OfiEndpoint::Open(1);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  p.ep[1] = e.value();
  std::vector<std::vector<uint8_t>> addrs = {p.ep[0]->address(), p.ep[1]->address()};
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(p.ep[r]->InsertPeers(addrs).ok());
  // The pair's eager size is the staging rank's: rank 0 could take a whole chunk.
  EXPECT_EQ(PairEager(p.ep), 8192u);
  p.link[0] = std::make_unique<OfiLink>(0, 1, p.ep[0], PairEager(p.ep));
  p.link[1] = std::make_unique<OfiLink>(1, 0, p.ep[1], PairEager(p.ep));
  ExchangeMany(p);
}

TEST_F(OfiTest, ChunksReceivedThroughStaging) {
  setenv("WEFT_OFI_PREPOST", "0", 1);
  Pair p = MakePair(/*max_chunk=*/65536);
  ASSERT_TRUE(p.link[1]);
  ExchangeMany(p);
}

// One message of each size both ways over links[r] (rank r's link to the other), all
// posted at once; every one must arrive, byte for byte.
void ExchangeSizes(Link* const (&links)[2], const std::vector<size_t>& sizes) {
  std::vector<Status> errors(2);
  std::vector<int> bad(2, 0);
  RunRanks(2, [&](int r) {
    std::vector<std::vector<uint8_t>> out, in;
    for (size_t size : sizes) {
      out.push_back(Pattern(r, 1 - r, size));
      in.emplace_back(size, 0);
    }
    std::vector<SendOp> sends(sizes.size());
    std::vector<RecvOp> recvs(sizes.size());
    Link* l = links[r];
    for (size_t j = 0; j < sizes.size(); ++j) {
      sends[j] = SendOp{Header(0, j, 0, sizes[j]), out[j].data()};
      recvs[j] = RecvOp{Header(0, j, 0, sizes[j]), in[j].data()};
      l->PostSend(&sends[j]);
      l->PostRecv(&recvs[j]);
    }
    errors[r] = Pump({l}, Deadline::AfterSeconds(30));
    for (size_t j = 0; j < sizes.size(); ++j)
      if (!recvs[j].done || in[j] != Pattern(1 - r, r, sizes[j])) ++bad[r];
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(errors[r].ok()) << errors[r].ToString();
    EXPECT_EQ(bad[r], 0) << "rank " << r;
  }
}

TEST_F(OfiTest, MessagesAroundTheEagerAndChunkLimits) {
  // Sizes at the eager limit (8 KiB: one message), one over it (header, then chunks),
  // at, under and over chunk boundaries, and zero.
  setenv("WEFT_OFI_EAGER", "8192", 1);
  Pair p = MakePair(/*max_chunk=*/4096);
  ASSERT_TRUE(p.link[1]);
  const uint64_t eager = p.link[0]->eager_bytes();
  ASSERT_EQ(eager, 8192u);
  ExchangeSizes({p.link[0].get(), p.link[1].get()},
                {4095, 4096, 4097, eager, eager + 1, 0, 3 * 4096 + 1, 4 * 4096});
}

TEST_F(OfiTest, RegisteredBuffersWhenForced) {
  setenv("WEFT_OFI_MR", "1", 1);
  Pair p = MakePair(/*max_chunk=*/262144);
  ASSERT_TRUE(p.link[1]);
  ExchangeMany(p);
}

TEST_F(OfiTest, PayloadReceivesArePrepostedOverRxmTcp) {
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  EXPECT_TRUE(p.ep[0]->limits().prepost_payload);
  setenv("WEFT_OFI_PREPOST", "0", 1);
  auto e = OfiEndpoint::Open(0);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_FALSE((*e)->limits().prepost_payload);
}

// A mismatched call: rank 1 sends a broadcast (seq 7) of `sent` bytes of 0xab where
// rank 0 expects an allreduce (seq 7, step 2) of in.size() bytes into `in`, which must
// not complete. Returns what the links report.
Status ExchangeMismatched(Pair& p, size_t sent, std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(sent, 0xab);
  SendOp s{Header(2, 7, 0, sent), out.data()};
  RecvOp r{Header(0, 7, 2, in.size()), in.data()};
  p.link[1]->PostSend(&s);
  p.link[0]->PostRecv(&r);
  Status st = Pump({p.link[1].get(), p.link[0].get()}, Deadline::AfterSeconds(10));
  EXPECT_FALSE(r.done) << sent << " bytes sent";
  return st;
}

TEST_F(OfiTest, PrepostedPayloadsStillReportAMismatchNamingBothCalls) {
  // The payload receive is posted before the header is checked: a peer's payload of
  // another size fails or lands short, but the error is the header's, naming both calls.
  for (size_t sent : {size_t{100000}, size_t{200000}, size_t{50000}}) {
    Pair p = MakePair();
    ASSERT_TRUE(p.link[1]);
    ASSERT_TRUE(p.ep[0]->limits().prepost_payload);
    std::vector<uint8_t> in(100000, 0);
    Status st = ExchangeMismatched(p, sent, in);
    EXPECT_EQ(st.code(), Code::kInvalidUsage) << sent << ": " << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("rank 0 expected allreduce seq 7 step 2 float32/sum "
                                        "100000 bytes from rank 1, but rank 1 sent broadcast"));
  }
}

TEST_F(OfiTest, EagerReceiveInPlaceReportsAMismatchNamingBothCalls) {
  // The receive of an eager op takes header and payload in place: a peer's message of
  // another size arrives short (its header is checked) or longer (the overflow sink
  // takes the excess, so the header still arrives); sizes around the eager limit, zero,
  // and far over it; expected sizes of an eager op and at the limit.
  for (size_t expected : {size_t{4000}, size_t{8192}}) {
    for (size_t sent : {size_t{0}, size_t{100}, size_t{3999}, size_t{4001}, size_t{8191},
                        size_t{8192}, size_t{8193}, size_t{300000}}) {
      if (sent == expected) continue;
      Pair p = MakePair();
      ASSERT_TRUE(p.link[1]);
      ASSERT_TRUE(p.ep[0]->limits().recv_iov);
      std::vector<uint8_t> in(expected, 0);
      Status st = ExchangeMismatched(p, sent, in);
      EXPECT_EQ(st.code(), Code::kInvalidUsage) << sent << ": " << st.ToString();
      EXPECT_THAT(st.message(),
                  HasSubstr(fmt::format("rank 0 expected allreduce seq 7 step 2 float32/sum {} "
                                        "bytes from rank 1, but rank 1 sent broadcast seq 7 "
                                        "step 0 float32/sum {} bytes",
                                        expected, sent)));
    }
  }
}

TEST_F(OfiTest, LargerMismatchedMessageWithoutOverflowRoomIsStillInvalidUsage) {
  // With registered buffers there is no overflow sink: a larger eager message is
  // truncated and its header lost, but only a different call sends one.
  setenv("WEFT_OFI_MR", "1", 1);
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  ASSERT_TRUE(p.ep[0]->limits().recv_iov);
  ASSERT_EQ(p.ep[0]->overflow_sink(), nullptr);
  std::vector<uint8_t> in(4000, 0);
  Status st = ExchangeMismatched(p, 8000, in);
  EXPECT_EQ(st.code(), Code::kInvalidUsage) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("rank 0 expected allreduce seq 7 step 2 float32/sum 4000 "
                                      "bytes from rank 1, but rank 1 sent a larger message"));
}

TEST_F(OfiTest, HeaderMismatchNamesBothCallsAndLeavesTheBufferAlone) {
  // Without pre-posted payloads (the default on providers other than rxm over tcp) no
  // byte of a mismatched call reaches the buffer.
  setenv("WEFT_OFI_PREPOST", "0", 1);
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  std::vector<uint8_t> in(100000, 0);
  Status st = ExchangeMismatched(p, 100000, in);
  EXPECT_EQ(st.code(), Code::kInvalidUsage) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("rank 0 expected allreduce seq 7 step 2 float32/sum 100000 "
                                      "bytes from rank 1, but rank 1 sent broadcast seq 7"));
  EXPECT_EQ(in, std::vector<uint8_t>(100000, 0));
}

// One message from rank 0 to rank 1, so that the provider has connected the pair (rxm
// connects on the first message): a control message can only leave over a connection.
void Connect(Pair& p) {
  std::vector<uint8_t> a(64, 1), b(64, 0);
  SendOp s0{Header(0, 0, 0, 64), a.data()};
  RecvOp r1{Header(0, 0, 0, 64), b.data()};
  p.link[0]->PostSend(&s0);
  p.link[1]->PostRecv(&r1);
  ASSERT_TRUE(Pump({p.link[0].get(), p.link[1].get()}, Deadline::AfterSeconds(10)).ok());
}

TEST_F(OfiTest, ShutdownFailsThePeersPendingReceive) {
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  Connect(p);  // a link in use
  p.link[1]->Shutdown();
  EXPECT_EQ(p.link[1]->Progress().status().code(), Code::kAborted);
  std::vector<uint8_t> buf(16);
  RecvOp r{Header(0, 1, 0, 16), buf.data()};
  p.link[0]->PostRecv(&r);
  Status st = Pump({p.link[0].get()}, Deadline::AfterSeconds(10));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("rank 0 lost connection to rank 1 (ofi tcp;ofi_rxm): peer closed"));
}

TEST_F(OfiTest, AbortFrameCarriesTheCauseToThePeer) {
  // As the communicator does when it fails: SendAbort with the cause, then Shutdown. The
  // peer's pending receive fails quoting the cause, not just "peer closed".
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  Connect(p);
  std::vector<uint8_t> buf(16);
  RecvOp r{Header(0, 1, 0, 16), buf.data()};
  p.link[0]->PostRecv(&r);
  ASSERT_TRUE(p.link[0]->Progress().ok());  // the receive is posted before the abort
  p.link[1]->SendAbort(InvalidUsage("rank 1: allreduce: the ranks passed different counts"));
  p.link[1]->Shutdown();
  Status st = Pump({p.link[0].get()}, Deadline::AfterSeconds(10));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("rank 0 was told by rank 1 (ofi tcp;ofi_rxm) that it failed"));
  EXPECT_THAT(st.message(), HasSubstr("the ranks passed different counts"));
  EXPECT_FALSE(r.done);
}

TEST_F(OfiTest, AbortBeforeThePeerPostsAnythingIsSeenLater) {
  // An idle peer: the abort frame waits in the provider until the peer's next call.
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  Connect(p);
  p.link[1]->SendAbort(Aborted("rank 1 called weftCommAbort"));
  p.link[1]->Shutdown();
  std::vector<uint8_t> buf(16);
  SendOp s{Header(0, 1, 0, 16), buf.data()};
  RecvOp r{Header(0, 0, 0, 16), buf.data()};
  p.link[0]->PostSend(&s);
  p.link[0]->PostRecv(&r);
  Status st = Pump({p.link[0].get()}, Deadline::AfterSeconds(10));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("rank 1 called weftCommAbort"));
}

TEST_F(OfiTest, IdleLinkOffersTheCompletionQueueFdAndItWakesWhenTheMessageComes) {
  // What the executor does when nothing moves: sleep in poll(2) on PollFd(). The fd must
  // become readable once the peer's message is there (a missed wake-up would leave the
  // rank asleep until its poll timeout).
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  Connect(p);
  ASSERT_TRUE(p.ep[0]->has_wait_fd()) << "tcp;ofi_rxm offers FI_WAIT_FD";
  std::vector<uint8_t> in(100000, 0), out = Pattern(1, 0, 100000);
  RecvOp r{Header(0, 1, 0, in.size()), in.data()};
  p.link[0]->PostRecv(&r);
  int fd = -1;
  for (int i = 0; i < 1000 && fd < 0; ++i) {  // until the provider has nothing left to do
    ASSERT_TRUE(p.link[0]->Progress().ok());
    fd = p.link[0]->PollFd();
  }
  ASSERT_GE(fd, 0);
  SendOp s{Header(0, 1, 0, out.size()), out.data()};
  p.link[1]->PostSend(&s);
  // The sender's thread progresses only its own endpoint; this one sleeps on the fd.
  std::thread sender([&] { EXPECT_TRUE(Pump({p.link[1].get()}, Deadline::AfterSeconds(20)).ok()); });
  Status st = Status::Ok();
  auto deadline = Deadline::AfterSeconds(20);
  while (!r.done && st.ok() && !deadline.expired()) {
    int wait_fd = p.link[0]->PollFd();
    if (wait_fd >= 0) {
      pollfd w{wait_fd, POLLIN, 0};
      // Bounded by the deadline; a missed wake-up shows as a timeout here.
      ASSERT_EQ(poll(&w, 1, 20000), 1) << "the fd did not wake for the peer's message";
    }
    Result<bool> moved = p.link[0]->Progress();
    st = moved.status();
  }
  sender.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(r.done);
  EXPECT_EQ(in, out);
}

TEST_F(OfiTest, PendingReceiveTimesOutAtTheDeadlineWhenNothingComes) {
  Pair p = MakePair();
  ASSERT_TRUE(p.link[1]);
  std::vector<uint8_t> buf(16);
  RecvOp r{Header(0, 1, 0, 16), buf.data()};
  p.link[0]->PostRecv(&r);
  Status st = Pump({p.link[0].get()}, Deadline::AfterSeconds(0.3));
  EXPECT_EQ(st.code(), Code::kDeadlineExceeded);
  // Destroying a link with a posted receive is clean (it is cancelled).
  p.link[0].reset();
}

// Multi-rail ofi: each rank with two endpoints (rails), rail k of one rank to rail k of
// the other, striped by a RailLink; messages of every size both ways, byte for byte.
TEST_F(OfiTest, RailLinkStripesOverTwoEndpointsPerRank) {
  constexpr int kRails = 2;
  std::shared_ptr<OfiEndpoint> ep[2][kRails];
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < kRails; ++k) {
      auto e = OfiEndpoint::Open(r);
      ASSERT_TRUE(e.ok()) << e.status().ToString();
      ep[r][k] = e.value();
    }
  std::unique_ptr<RailLink> link[2];
  for (int r = 0; r < 2; ++r) {
    std::vector<std::unique_ptr<Link>> rails;
    for (int k = 0; k < kRails; ++k) {
      ASSERT_TRUE(ep[r][k]->InsertPeers({ep[0][k]->address(), ep[1][k]->address()}).ok());
      rails.push_back(std::make_unique<OfiLink>(r, 1 - r, ep[r][k], uint64_t{1} << 20));
    }
    auto l = RailLink::Create(r, 1 - r, std::move(rails), /*stripe_min=*/65536);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    link[r] = std::move(l).value();
    EXPECT_STREQ(link[r]->Name(), "ofi");
  }
  ExchangeSizes({link[0].get(), link[1].get()}, {0, 7, 65535, 65536, 65537, 300001, 3 << 20, 1});
}

TEST_F(OfiTest, BadRailCountIsAnErrorNamingTheVariable) {
  for (const char* bad : {"0", "17", "two", "-1"}) {
    setenv("WEFT_OFI_NRAILS", bad, 1);
    ThreadAllGather gather(2);
    std::vector<Status> errors(2);
    RunRanks(2, [&](int r) {
      MeshOptions o;
      o.rank = r;
      o.size = 2;
      o.comm_id = UniqueCommId();
      o.mode = TransportMode::kOfi;
      o.deadline = Deadline::AfterSeconds(5);
      errors[r] = Mesh::Connect(o, gather.For(r, o.deadline)).status();
    });
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(errors[r].code(), Code::kInvalidArgument) << bad << ": " << errors[r].ToString();
      EXPECT_THAT(errors[r].message(), HasSubstr("WEFT_OFI_NRAILS")) << bad;
    }
  }
  unsetenv("WEFT_OFI_NRAILS");
}

// Every pair of 3 ranks over ofi, one message each way.
void MeshConnectsEveryPeer() {
  constexpr int n = 3;
  ThreadAllGather gather(n);
  uint64_t comm = UniqueCommId();
  std::vector<std::unique_ptr<Mesh>> meshes(n);
  std::vector<Status> errors(n);
  RunRanks(n, [&](int r) {
    MeshOptions o;
    o.rank = r;
    o.size = n;
    o.comm_id = comm;
    o.mode = TransportMode::kOfi;
    o.deadline = Deadline::AfterSeconds(20);
    auto m = Mesh::Connect(o, gather.For(r, o.deadline));
    if (!m.ok()) {
      errors[r] = m.status();
      return;
    }
    meshes[r] = std::move(m).value();
    // One message to every peer and from every peer.
    std::vector<std::vector<uint8_t>> out(n), in(n);
    std::vector<SendOp> sends(n);
    std::vector<RecvOp> recvs(n);
    std::vector<Link*> links;
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      out[q] = Pattern(r, q, 50000);
      in[q].assign(50000, 0);
      sends[q] = SendOp{Header(5, 1, 0, 50000), out[q].data()};
      recvs[q] = RecvOp{Header(5, 1, 0, 50000), in[q].data()};
      meshes[r]->link(q)->PostSend(&sends[q]);
      meshes[r]->link(q)->PostRecv(&recvs[q]);
      links.push_back(meshes[r]->link(q));
    }
    errors[r] = Pump(links, Deadline::AfterSeconds(20));
    for (int q = 0; q < n; ++q)
      if (q != r && in[q] != Pattern(q, r, 50000) && errors[r].ok())
        errors[r] = Internal("wrong bytes from rank " + std::to_string(q));
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(errors[r].ok()) << errors[r].ToString();
    ASSERT_NE(meshes[r], nullptr);
    for (int q = 0; q < n; ++q)
      if (q != r) {
        EXPECT_STREQ(meshes[r]->link(q)->Name(), "ofi");
        // Each rank's eager size travels on its card: here both offer 1 MiB.
        EXPECT_EQ(static_cast<OfiLink*>(meshes[r]->link(q))->eager_bytes(), 1u << 20);
      }
  }
}

TEST_F(OfiTest, MeshWithOfiModeConnectsEveryPeer) { MeshConnectsEveryPeer(); }

TEST_F(OfiTest, MeshWithTwoRailsPerRankOnOneHostUsesRailZero) {
  // Each rank opens two endpoints and publishes both; ranks on one host share one path
  // (loopback), so their pairs use rail 0 alone: plain ofi links.
  setenv("WEFT_OFI_NRAILS", "2", 1);
  MeshConnectsEveryPeer();
}

TEST_F(OfiTest, CardCarriesTheOfiAddress) {
  Card c;
  c.rank = 1;
  c.size = 2;
  c.comm_id = 7;
  c.mode = TransportMode::kOfi;
  c.host_id = "h";
  c.ofi_provider = "tcp;ofi_rxm";
  c.ofi_addrs = {{0x00, 0x0a, 0xff}};
  c.ofi_eager = 1048576;
  std::string text = EncodeCard(c);
  EXPECT_THAT(text, HasSubstr("mode ofi"));
  EXPECT_THAT(text, HasSubstr("\nofi tcp;ofi_rxm 000aff eager 1048576"));
  Result<Card> d = DecodeCard(text);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->mode, TransportMode::kOfi);
  EXPECT_EQ(d->ofi_provider, "tcp;ofi_rxm");
  EXPECT_EQ(d->ofi_addrs, c.ofi_addrs);
  EXPECT_EQ(d->ofi_eager, c.ofi_eager);
  // One address per rail.
  c.ofi_addrs = {{0x01, 0x02}, {0xab}, {0xcd, 0xef, 0x00}};
  text = EncodeCard(c);
  EXPECT_THAT(text, HasSubstr("\nofi tcp;ofi_rxm 0102,ab,cdef00 eager 1048576"));
  d = DecodeCard(text);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->ofi_addrs, c.ofi_addrs);
  std::string seventeen = "ab";
  for (int k = 0; k < 16; ++k) seventeen += ",ab";
  const std::vector<std::string> bad_lines = {
      "ofi tcp;ofi_rxm 0 eager 1", "ofi tcp;ofi_rxm zz eager 1", "ofi tcp;ofi_rxm",
      "ofi  000aff eager 1", "ofi tcp;ofi_rxm 000aff", "ofi tcp;ofi_rxm 000aff eager",
      "ofi tcp;ofi_rxm 000aff eager -1", "ofi tcp;ofi_rxm 000aff eager 1k",
      "ofi tcp;ofi_rxm 000aff eager 99999999999999999999", "ofi tcp;ofi_rxm 000aff size 1",
      "ofi tcp;ofi_rxm 000aff eager 1 2", "ofi tcp;ofi_rxm 0a,,0b eager 1",
      "ofi tcp;ofi_rxm 0a, eager 1", "ofi tcp;ofi_rxm ,0a eager 1",
      "ofi tcp;ofi_rxm 0a,b eager 1", "ofi tcp;ofi_rxm " + seventeen + " eager 1"};
  for (const std::string& bad : bad_lines) {
    std::string s = text.substr(0, text.rfind('\n') + 1) + bad;
    EXPECT_FALSE(DecodeCard(s).ok()) << s;
  }
}

}  // namespace
}  // namespace weft::transport::ofi

#endif  // WEFT_HAVE_OFI
