// The executor: runs one rank's schedule over the links of a Mesh, round by round.
//
// For each round it posts every send and receive, then drives the links' Progress()
// until all complete (spinning briefly, then yielding, then sleeping in poll(2), so
// that oversubscribed ranks give their core away), and then runs the round's local
// reduce/copy steps. Every wait is bounded by the call's deadline; a timeout names the
// peers still being waited on.
//
// Thread-safety: none; the communicator serialises calls.
#pragma once

#include <cstdint>

#include "core/deadline.h"
#include "core/status.h"
#include "core/types.h"
#include "sched/schedule.h"
#include "transport/mesh.h"

namespace weft::exec {

struct ExecContext {
  transport::Mesh* mesh = nullptr;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;       // kAvg is reduced as kSum
  uint16_t kind = 0;            // WireHeader::kind
  uint64_t seq = 0;             // WireHeader::seq
  Deadline deadline = Deadline::Never();
  const char* what = "";        // "allreduce", for error messages
};

struct Buffers {
  const void* input = nullptr;
  void* output = nullptr;
  void* scratch = nullptr;
};

// Runs `schedule`. On error the message names this rank, the call (what/seq), the
// round and the peer involved; the links may be left mid-message (the caller marks
// the communicator failed).
Status Execute(const sched::Schedule& schedule, const ExecContext& ctx, const Buffers& bufs);

}  // namespace weft::exec
