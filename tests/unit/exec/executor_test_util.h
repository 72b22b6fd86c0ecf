// Test helpers for the executor: schedule steps written short, and two shm thread-ranks
// of one process to run them on.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "../transport/test_util.h"
#include "exec/executor.h"

namespace weft::exec::testing {

inline sched::Step Send(int peer, sched::Slice src) {
  return {sched::StepKind::kSend, peer, src, {}};
}
inline sched::Step Recv(int peer, sched::Slice dst) {
  return {sched::StepKind::kRecv, peer, {}, dst};
}
inline sched::Step Copy(sched::Slice dst, sched::Slice src) {
  return {sched::StepKind::kCopy, -1, src, dst};
}
inline sched::Step Reduce(sched::Slice dst, sched::Slice src) {
  return {sched::StepKind::kReduce, -1, src, dst};
}

// Runs fn(rank, mesh, executor) on two shm thread-ranks; returns each rank's status.
inline std::vector<Status> OnTwoShmRanks(
    const std::function<Status(int, transport::Mesh&, Executor&)>& fn) {
  std::vector<std::unique_ptr<transport::Mesh>> meshes = transport::testing::BuildMeshes(
      2, transport::TransportMode::kShm, transport::testing::UniqueCommId());
  std::vector<Status> out(2);
  if (!meshes[0] || !meshes[1]) {
    ADD_FAILURE() << "no meshes";
    return out;
  }
  transport::testing::RunRanks(2, [&](int r) {
    Executor executor(meshes[r].get());
    out[r] = fn(r, *meshes[r], executor);
  });
  return out;
}

// Runs fn(rank, executor) on two shm thread-ranks and checks the status each returns.
inline void WithTwoShmRanks(const std::function<Status(int, Executor&)>& fn) {
  std::vector<Status> s = OnTwoShmRanks(
      [&](int r, transport::Mesh&, Executor& executor) { return fn(r, executor); });
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(s[r].ok()) << "rank " << r << ": " << s[r].ToString();
}

// A call context for a test's Run: float32 sum, sequence 1, 20 s deadline.
inline ExecContext TestContext(const char* what) {
  ExecContext ctx;
  ctx.what = what;
  ctx.seq = 1;
  ctx.deadline = LazyDeadline::AfterSeconds(20);
  return ctx;
}

}  // namespace weft::exec::testing
