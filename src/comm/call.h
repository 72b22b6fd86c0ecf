// One call into the library, as the communicator sees it: which operation, on which
// buffers, with which counts. Validation of the caller's arguments lives here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/types.h"
#include "sched/schedule.h"

namespace weft::comm {

// The peer of a receive from any source (weftRecvAny); exec::kAnySource has the same
// value (checked in communicator.cc), as the call's peer is passed to the engine as is.
inline constexpr int kAnySource = -2;

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
  // send / recv: the caller's tag, carried in the message's header (WireHeader::step) and
  // checked by the receiver; the bits of the caller's int.
  uint32_t tag = 0;
  // recv from kAnySource (weftRecvAny): where the peer it took the message from is
  // written before the call completes.
  int* source = nullptr;
  // Bounds each wait of the call, counted from when it starts running: the
  // communicator's timeout when the call was issued (weftCommSetTimeout), stamped by
  // Communicator::Run, Submit and RunOnStream. 0 (the library's own calls, built with
  // the functions below): the communicator's timeout when the call runs.
  double timeout_s = 0;
};

// A receive from whichever peer sends first (weftRecvAny).
inline bool IsAnySource(const Call& call) {
  return call.kind == CallKind::kRecv && call.peer == kAnySource;
}

// The bound of `call`'s waits: its own timeout, or `fallback` (the communicator's) for a
// call that carries none.
inline double TimeoutOr(const Call& call, double fallback) {
  return call.timeout_s > 0 ? call.timeout_s : fallback;
}

// The one way to build a call: a collective (`root` and `op` ignored where they mean
// nothing), or a send or receive with `peer`.
inline Call MakeCollective(sched::Collective coll, const void* send, void* recv, size_t count,
                           DataType dtype, RedOp op = RedOp::kSum, int root = 0) {
  Call c;
  c.coll = coll;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.dtype = dtype;
  c.op = op;
  c.root = root;
  return c;
}
inline Call MakePointToPoint(CallKind kind, const void* send, void* recv, size_t count,
                             DataType dtype, int peer, int tag = 0) {
  Call c;
  c.tag = static_cast<uint32_t>(tag);
  c.kind = kind;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.dtype = dtype;
  c.peer = peer;
  return c;
}
inline Call MakeBarrier() {
  return MakeCollective(sched::Collective::kBarrier, nullptr, nullptr, 0, DataType::kUint8);
}

// The schedule spec of collective `call` on `rank` of `size` ranks, without a topology: a
// barrier moves no elements, whatever count the call carries.
inline sched::CollectiveSpec SpecOf(const Call& call, int rank, int size) {
  sched::CollectiveSpec spec{call.coll, rank, size, call.root, call.count, nullptr};
  if (call.coll == sched::Collective::kBarrier) spec.count = 0;
  return spec;
}

// Broadcast, reduce, gather and scatter: the collectives whose `root` means something.
bool HasRoot(sched::Collective c);
// Allreduce, reduce and reducescatter: the collectives whose `op` means something.
bool Reduces(sched::Collective c);

// Whether the call's input (output) matters on `rank`: NCCL lets the others be NULL or
// junk (a non-root's broadcast input, a non-root's reduce output, any barrier buffer).
bool UsesInput(const Call& call, int rank);
bool UsesOutput(const Call& call, int rank);

// "allreduce", "send", ...
const char* CallName(const Call& call);

// Checks the arguments against a communicator of `size` ranks where this is `rank`.
// InvalidArgument names the argument and the call.
Status ValidateCall(const Call& call, int rank, int size);

}  // namespace weft::comm
