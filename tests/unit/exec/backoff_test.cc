// Backoff's wake-word arming (Link::ArmWake) and its lifetime rule: no link stays armed
// past Reset(), and the P2P engine leaves none armed once it has failed its ops, since an
// abort frees the links right after (found by ThreadSanitizer as a use after free).
#include "exec/backoff.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <vector>

#include "../transport/test_util.h"
#include "exec/p2p_engine.h"

namespace weft::exec {
namespace {

// A link that is always busy, never moves, and offers a wake word.
class ArmableLink : public transport::Link {
 public:
  ArmableLink() : Link(0, 1) {}
  void PostSend(transport::SendOp*) override {}
  void PostRecv(transport::RecvOp*) override {}
  Result<bool> Progress() override { return false; }
  bool Busy() const override { return true; }
  std::atomic<uint32_t>* ArmWake() override {
    ++arms;
    armed = true;
    return &word;
  }
  void DisarmWake() override { armed = false; }
  const char* Name() const override { return "armable"; }
  void Shutdown() override {}

  std::atomic<uint32_t> word{0};
  int arms = 0;
  bool armed = false;
};

// Idles until Backoff has armed the link (past its spin and yield phases). The yield
// phase is a count of sched_yield calls, and on a loaded machine each may give the
// core away for a whole time slice: the bound is the count, the deadline only a
// backstop (5 s failed here under a parallel build).
void IdleUntilArmed(Backoff& backoff, ArmableLink& link) {
  std::vector<transport::Link*> links{&link};
  const Deadline deadline = Deadline::AfterSeconds(120);
  for (int i = 0; i < 100000 && !link.armed && !deadline.expired(); ++i)
    backoff.Idle(links, deadline);
}

TEST(BackoffTest, ArmsTheBusyLinksWakeWordAfterSpinningAndYielding) {
  ArmableLink link;
  Backoff backoff(/*oversubscribed=*/true);
  IdleUntilArmed(backoff, link);
  ASSERT_TRUE(link.armed) << "never armed the wake word";
  EXPECT_EQ(link.arms, 1);
  backoff.Reset();
  EXPECT_FALSE(link.armed) << "Reset() must disarm";
}

TEST(BackoffTest, SleepOnTheWakeWordDisarmsAfterwards) {
  ArmableLink link;
  Backoff backoff(true);
  IdleUntilArmed(backoff, link);
  ASSERT_TRUE(link.armed);
  std::vector<transport::Link*> links{&link};
  backoff.Idle(links, Deadline::AfterSeconds(1));  // sleeps (capped), then disarms
  EXPECT_FALSE(link.armed);
}

TEST(BackoffTest, DestructionDisarms) {
  ArmableLink link;
  {
    Backoff backoff(true);
    IdleUntilArmed(backoff, link);
    ASSERT_TRUE(link.armed);
  }
  EXPECT_FALSE(link.armed);
}

// Two shm thread-ranks; rank 0's engine waits for a receive that never comes until its
// wake word is armed, then fails its ops and its mesh is freed before the engine, as
// Communicator::Abort does. Under the sanitizers a link left armed is a use after free
// in ~Backoff.
TEST(P2PEngineTest, FailAllLeavesNoLinkArmedSoTheMeshMayGoFirst) {
  std::vector<std::unique_ptr<transport::Mesh>> meshes = transport::testing::BuildMeshes(
      2, transport::TransportMode::kShm, transport::testing::UniqueCommId());
  ASSERT_TRUE(meshes[0] && meshes[1]);

  auto engine = std::make_unique<P2PEngine>(meshes[0].get());
  int value = 0;
  Status result;
  int completions = 0;
  engine->PostRecv(1, /*tag=*/0, DataType::kInt32, &value, sizeof(value),
                   Deadline::AfterSeconds(20), [&](Status s) {
                     result = s;
                     ++completions;
                   });
  // Enough fruitless passes to pass the spin and yield phases and arm the wake word
  // (each sleep is capped at 1 ms by the engine).
  for (int i = 0; i < 3000; ++i) {
    auto moved = engine->Poll();
    ASSERT_TRUE(moved.ok()) << moved.status().ToString();
    ASSERT_FALSE(moved.value());
    engine->Idle();
  }
  engine->FailAll(Aborted("test abort"));
  EXPECT_EQ(completions, 1);
  EXPECT_EQ(result.code(), Code::kAborted);
  meshes[0].reset();  // the links go first, as in Communicator::Abort
  engine.reset();
  meshes[1].reset();
}

}  // namespace
}  // namespace weft::exec
