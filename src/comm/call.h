// One call into the library, as the communicator sees it: which operation, on which
// buffers, with which counts. Validation of the caller's arguments lives here.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "core/types.h"
#include "sched/schedule.h"

namespace weft::comm {

enum class CallKind { kCollective, kSend, kRecv };

struct Call {
  CallKind kind = CallKind::kCollective;
  sched::Collective coll = sched::Collective::kAllReduce;  // kCollective only
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  DataType dtype = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  int root = 0;   // rooted collectives
  int peer = -1;  // send / recv
};

// Broadcast, reduce, gather and scatter: the collectives whose `root` means something.
bool HasRoot(sched::Collective c);
// Allreduce, reduce and reducescatter: the collectives whose `op` means something.
bool Reduces(sched::Collective c);

// "allreduce", "send", ...
const char* CallName(const Call& call);

// Checks the arguments against a communicator of `size` ranks where this is `rank`.
// InvalidArgument names the argument and the call.
Status ValidateCall(const Call& call, int rank, int size);

}  // namespace weft::comm
