// Contention: messages that share a NIC, a port or a leaf uplink slow each other down.
// Schedules are written by hand here so that exactly the intended messages overlap.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine.h"

namespace weft::sim {
namespace {

using sched::Buf;
using sched::Schedule;
using sched::Step;
using sched::StepKind;

constexpr double kAlpha = 10e-6;
constexpr double kNicBps = 10e9;
constexpr size_t kElems = 1 << 20;  // 4 MiB of float32

ClusterSpec TwoHosts(int accels, int nics) {
  ClusterSpec c;
  c.hosts = 2;
  c.accels_per_host = accels;
  c.nics_per_host = nics;
  c.nic_bytes_per_s = kNicBps;
  c.inter_alpha_s = kAlpha;
  c.intra_bytes_per_s = 100e9;
  c.intra_alpha_s = 1e-6;
  return c;
}

Step Send(int peer) { return {StepKind::kSend, peer, {Buf::kInput, 0, kElems}, {}}; }
Step Recv(int peer) { return {StepKind::kRecv, peer, {}, {Buf::kOutput, 0, kElems}}; }

double RunSim(const ClusterSpec& c, std::vector<Schedule> scheds) {
  const Symmetry none = Symmetry::None(c.ranks());
  EngineInput in{&c, &none, &scheds, 4};
  auto r = RunEngine(in);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->seconds : -1;
}

// Ranks 0..a-1 on host 0 each send one message to the same local rank on host 1.
std::vector<Schedule> Pairs(int accels, int senders) {
  std::vector<Schedule> s(2 * accels);
  for (int i = 0; i < senders; ++i) {
    s[i].rounds.push_back({{Send(accels + i)}});
    s[accels + i].rounds.push_back({{Recv(i)}});
  }
  return s;
}

TEST(ContentionTest, TwoFlowsSharingANicTakeTwiceAsLong) {
  const ClusterSpec c = TwoHosts(2, 1);  // both accelerators share the one NIC
  const double bytes = kElems * 4.0;
  const double one = RunSim(c, Pairs(2, 1));
  const double two = RunSim(c, Pairs(2, 2));
  EXPECT_NEAR(one, kAlpha + bytes / kNicBps, 1e-12);
  EXPECT_NEAR(two, kAlpha + 2 * bytes / kNicBps, 1e-12);
}

TEST(ContentionTest, RailNicsDoNotShare) {
  const ClusterSpec c = TwoHosts(2, 2);  // one NIC per accelerator
  EXPECT_NEAR(RunSim(c, Pairs(2, 2)), RunSim(c, Pairs(2, 1)), 1e-12);
}

TEST(ContentionTest, StripingPoolsTheHostsNics) {
  ClusterSpec c = TwoHosts(2, 2);
  c.nic_policy = NicPolicy::kStripe;
  const double bytes = kElems * 4.0;
  // One message alone gets both NICs; two share them.
  EXPECT_NEAR(RunSim(c, Pairs(2, 1)), kAlpha + bytes / (2 * kNicBps), 1e-12);
  EXPECT_NEAR(RunSim(c, Pairs(2, 2)), kAlpha + bytes / kNicBps, 1e-12);
}

TEST(ContentionTest, IncastSharesTheReceiverIngress) {
  // Host 0's and host 2's rank send to host 1 at once: host 1's NIC ingress is shared.
  ClusterSpec c = TwoHosts(1, 1);
  c.hosts = 3;
  std::vector<Schedule> s(3);
  s[0].rounds.push_back({{Send(1)}});
  s[2].rounds.push_back({{Send(1)}});
  s[1].rounds.push_back({{Recv(0), Recv(2)}});
  EXPECT_NEAR(RunSim(c, s), kAlpha + 2 * kElems * 4.0 / kNicBps, 1e-12);
}

TEST(ContentionTest, OversubscribedLeafUplinkIsShared) {
  // 4 single-GPU hosts, leaves of 2, oversubscription 2: a leaf's uplink carries one
  // NIC's worth. Two cross-leaf flows out of leaf 0 share it; within a leaf they do not.
  ClusterSpec c = TwoHosts(1, 1);
  c.hosts = 4;
  c.hosts_per_leaf = 2;
  c.oversubscription = 2.0;
  const double bytes = kElems * 4.0;
  std::vector<Schedule> cross(4);
  cross[0].rounds.push_back({{Send(2)}});
  cross[1].rounds.push_back({{Send(3)}});
  cross[2].rounds.push_back({{Recv(0)}});
  cross[3].rounds.push_back({{Recv(1)}});
  EXPECT_NEAR(RunSim(c, cross), kAlpha + 2 * bytes / kNicBps, 1e-12);
  std::vector<Schedule> local(4);
  local[0].rounds.push_back({{Send(1)}});
  local[1].rounds.push_back({{Recv(0)}});
  EXPECT_NEAR(RunSim(c, local), kAlpha + bytes / kNicBps, 1e-12);
}

// Even ranks send to the even rank of the next host, odd ranks to the even rank two hosts
// on: every even rank's NIC receives two flows at once. The schedule is equivariant
// under translation by one host, so the shortcut applies; it is exact only if the two
// representatives' flows, which land on different hosts, are merged into one ingress
// class.
TEST(ContentionTest, ShortcutMergesResourcesIntoClasses) {
  ClusterSpec c = TwoHosts(2, 2);
  c.hosts = 4;
  const int p = c.ranks();
  std::vector<Schedule> all(p);
  for (int r = 0; r < p; ++r) {
    const int to = (r % 2 == 0) ? (r + 2) % p : (r + 3) % p;
    all[r].rounds.push_back({{Send(to)}});
  }
  for (int r = 0; r < p; ++r) {
    const int to = all[r].rounds[0].steps[0].peer;
    all[to].rounds[0].steps.push_back(Recv(r));
  }
  const double full = RunSim(c, all);
  EXPECT_NEAR(full, kAlpha + 2 * kElems * 4.0 / kNicBps, 1e-12);
  const Symmetry sym = Symmetry::Of(SymmetryKind::kTranslation, p, 2);
  std::vector<Schedule> reps(all.begin(), all.begin() + 2);
  auto r = RunEngine({&c, &sym, &reps, 4});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(r->seconds, full, 1e-12);
}

TEST(EngineErrorTest, MismatchedSizesAreReported) {
  const ClusterSpec c = TwoHosts(1, 1);
  std::vector<Schedule> s(2);
  s[0].rounds.push_back({{Send(1)}});
  Step short_recv = Recv(0);
  short_recv.dst.count = 5;
  s[1].rounds.push_back({{short_recv}});
  const Symmetry none = Symmetry::None(2);
  auto r = RunEngine({&c, &none, &s, 4});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
}

TEST(EngineErrorTest, DeadlockIsReported) {
  const ClusterSpec c = TwoHosts(1, 1);
  std::vector<Schedule> s(2);
  s[0].rounds.push_back({{Recv(1)}});
  s[1].rounds.push_back({{Recv(0)}});
  const Symmetry none = Symmetry::None(2);
  auto r = RunEngine({&c, &none, &s, 4});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deadlock"), std::string::npos);
}

}  // namespace
}  // namespace weft::sim
