// The flight recorder's dump read back by weft-doctor's parser, and the diagnosis on
// hand-made dumps of the situations it must tell apart.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "comm/flight_recorder.h"
#include "diagnose.h"

namespace weft::doctor {
namespace {

TEST(FlightRecorder, DumpRoundTripsThroughTheDoctorsParser) {
  comm::FlightRecorder fr(0xabcdef, 1, 4);
  fr.Begin(0, "barrier", 0, "uint8");
  fr.SetAlgo("dissemination");
  fr.End(Status::Ok());
  exec::Progress* p = fr.Begin(1, "allreduce", 4096, "float32");
  fr.SetAlgo("ring");
  p->round.store(2);
  p->waiting_for.store(3);
  std::string error;
  auto dump = ParseDump(fr.ToJson("test \"quoted\"\n"), &error);
  ASSERT_TRUE(dump) << error;
  EXPECT_EQ(dump->comm, "0000000000abcdef");
  EXPECT_EQ(dump->rank, 1);
  EXPECT_EQ(dump->size, 4);
  EXPECT_EQ(dump->reason, "test \"quoted\"\n");
  ASSERT_EQ(dump->ops.size(), 2u);
  EXPECT_EQ(dump->ops[0].state, "done");
  EXPECT_EQ(dump->ops[0].algo, "dissemination");
  EXPECT_EQ(dump->ops[1].state, "running");
  EXPECT_EQ(dump->ops[1].round, 2);
  EXPECT_EQ(dump->ops[1].waiting_for, 3);
  fr.End(DeadlineExceeded("timed out \"x\""));
  dump = ParseDump(fr.ToJson("timeout"), &error);
  ASSERT_TRUE(dump) << error;
  EXPECT_EQ(dump->ops[1].state, "failed");
  EXPECT_EQ(dump->ops[1].status, "DeadlineExceeded: timed out \"x\"");
}

TEST(FlightRecorder, DumpCarriesTheCommunicatorsName) {
  comm::FlightRecorder fr(7, 0, 2, "dp \"replicas\"");
  const std::string json = fr.ToJson("x");
  EXPECT_NE(json.find(R"("name": "dp \"replicas\"")"), std::string::npos) << json;
  std::string error;
  EXPECT_TRUE(ParseDump(json, &error)) << error;
  comm::FlightRecorder unnamed(7, 0, 2);
  EXPECT_NE(unnamed.ToJson("x").find(R"("name": "")"), std::string::npos);
}

TEST(FlightRecorder, KeepsTheLastEntriesOnly) {
  setenv("WEFT_FLIGHT_RECORDER_ENTRIES", "3", 1);
  comm::FlightRecorder fr(1, 0, 1);
  unsetenv("WEFT_FLIGHT_RECORDER_ENTRIES");
  for (int i = 0; i < 10; ++i) {
    fr.Begin(i, "allreduce", 4, "float32");
    fr.SetAlgo("ring");
    fr.End(Status::Ok());
  }
  std::string error;
  auto dump = ParseDump(fr.ToJson("x"), &error);
  ASSERT_TRUE(dump) << error;
  ASSERT_EQ(dump->ops.size(), 3u);
  // No writer is inside an entry, so every entry reads at once.
  EXPECT_NE(fr.ToJson("x").find(R"("unsettled": 0)"), std::string::npos);
  EXPECT_EQ(dump->ops.front().seq, 7u);
  EXPECT_EQ(dump->ops.back().seq, 9u);
}

// The dump reads entries while the calling thread writes them (SIGUSR1 during a call):
// every entry it shows must be one call's, never a mix of two. Each call here is
// recognisable: its bytes are seq * 7 and its names follow seq's parity.
TEST(FlightRecorder, DumpDuringCallsShowsWholeEntries) {
  setenv("WEFT_FLIGHT_RECORDER_ENTRIES", "1", 1);  // every dump reads the entry being written
  comm::FlightRecorder fr(2, 0, 2);
  unsetenv("WEFT_FLIGHT_RECORDER_ENTRIES");
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t seq = 0; !stop.load(); ++seq) {
      const bool even = seq % 2 == 0;
      fr.Begin(seq, even ? "allreduce" : "broadcast", seq * 7, even ? "float32" : "int8");
      fr.SetAlgo(even ? "ring" : "binomial");
      fr.End(Status::Ok());
      std::this_thread::yield();  // a real caller does work between calls
    }
  });
  int entries_checked = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (entries_checked < 50000 && std::chrono::steady_clock::now() < give_up) {
    std::string error;
    auto dump = ParseDump(fr.ToJson("test"), &error);
    ASSERT_TRUE(dump) << error;
    for (const Op& op : dump->ops) {
      const bool even = op.seq % 2 == 0;
      EXPECT_EQ(op.bytes, op.seq * 7);
      EXPECT_EQ(op.op, even ? "allreduce" : "broadcast") << "seq " << op.seq;
      EXPECT_EQ(op.dtype, even ? "float32" : "int8") << "seq " << op.seq;
      // Between Begin and SetAlgo the algorithm is not known yet.
      if (!op.algo.empty()) {
        EXPECT_EQ(op.algo, even ? "ring" : "binomial") << "seq " << op.seq;
      }
      ++entries_checked;
    }
  }
  stop.store(true);
  writer.join();
  EXPECT_GE(entries_checked, 1000);  // at least, even in a slow sanitizer build
}

Dump MakeDump(int rank, int size, std::vector<Op> ops) {
  Dump d;
  d.comm = "c";
  d.rank = rank;
  d.size = size;
  d.ops = std::move(ops);
  return d;
}
Op Done(uint64_t seq) { return Op{seq, "allreduce", "float32", "ring", "done", "", 16}; }
Op Running(uint64_t seq, int waiting_for) {
  Op op{seq, "allreduce", "float32", "ring", "running", "", 16};
  op.round = 0;
  op.waiting_for = waiting_for;
  return op;
}

TEST(Diagnose, NamesTheRankThatIsBehindAndWhoWaitsForIt) {
  auto v = Diagnose({MakeDump(0, 3, {Done(3), Running(4, 2)}),
                     MakeDump(1, 3, {Done(3), Running(4, 0)}),
                     MakeDump(2, 3, {Done(3)})});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].behind, std::vector<int>{2});
  EXPECT_TRUE(v[0].missing.empty());
  EXPECT_NE(v[0].summary.find("rank(s) 2 are behind"), std::string::npos) << v[0].summary;
  EXPECT_NE(v[0].summary.find("rank(s) 0 wait for rank 2"), std::string::npos) << v[0].summary;
}

TEST(Diagnose, NamesMissingRanks) {
  auto v = Diagnose({MakeDump(0, 3, {Running(4, 1)}), MakeDump(2, 3, {Running(4, 0)})});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].missing, std::vector<int>{1});
  EXPECT_NE(v[0].summary.find("rank(s) 1 left no dump"), std::string::npos) << v[0].summary;
}

TEST(Diagnose, ReportsTheFirstFailure) {
  Op late{4, "allreduce", "float32", "ring", "failed", "Unavailable: told by rank 0", 16};
  late.end_ns = 200;
  Op first{4, "allreduce", "float32", "ring", "failed", "DeadlineExceeded: waiting for rank 1", 16};
  first.end_ns = 100;
  auto v = Diagnose({MakeDump(0, 2, {first}), MakeDump(1, 2, {late})});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].summary.find("first failure: rank 0"), std::string::npos) << v[0].summary;
}

TEST(Diagnose, HealthyWhenEveryoneFinished) {
  auto v = Diagnose({MakeDump(0, 2, {Done(5)}), MakeDump(1, 2, {Done(5)})});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v[0].behind.empty());
  EXPECT_EQ(v[0].summary, "no rank is behind, waiting or failed");
}

TEST(ParseDump, RejectsGarbageWithAReason) {
  std::string error;
  EXPECT_FALSE(ParseDump("not json", &error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(ParseDump("{\"x\": 1}", &error));
  EXPECT_NE(error.find("not a weft flight-recorder dump"), std::string::npos);
  EXPECT_FALSE(ParseDump(R"({"weft_flight_recorder": 1, "comm": "c", "rank": 5, "size": 2, "entries": []})", &error));
  EXPECT_NE(error.find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace weft::doctor
