#include "comm/call.h"

#include <fmt/format.h>

namespace weft::comm {

using sched::Collective;

bool UsesInput(const Call& c, int rank) {
  if (c.coll == Collective::kBarrier) return false;
  if (c.coll == Collective::kScatter || c.coll == Collective::kBroadcast) return c.root == rank;
  return true;
}

bool UsesOutput(const Call& c, int rank) {
  if (c.coll == Collective::kBarrier) return false;
  if (c.coll == Collective::kReduce || c.coll == Collective::kGather) return c.root == rank;
  return true;
}

const char* CallName(const Call& call) {
  switch (call.kind) {
    case CallKind::kSend: return "send";
    case CallKind::kRecv: return "recv";
    case CallKind::kCollective: return sched::CollectiveName(call.coll);
  }
  return "?";
}

bool HasRoot(sched::Collective c) {
  using sched::Collective;
  return c == Collective::kReduce || c == Collective::kBroadcast || c == Collective::kGather ||
         c == Collective::kScatter;
}

bool Reduces(sched::Collective c) {
  using sched::Collective;
  return c == Collective::kAllReduce || c == Collective::kReduce ||
         c == Collective::kReduceScatter;
}

Status ValidateCall(const Call& call, int rank, int size) {
  const char* name = CallName(call);
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("rank {}: {}: {}", rank, name, why));
  };
  if (static_cast<int>(call.dtype) < 0 || static_cast<int>(call.dtype) >= kNumDataTypes)
    return bad(fmt::format("unknown datatype {}", static_cast<int>(call.dtype)));
  if (static_cast<int>(call.op) < 0 || static_cast<int>(call.op) >= kNumRedOps)
    return bad(fmt::format("unknown reduction op {}", static_cast<int>(call.op)));
  if (call.count > (SIZE_MAX / 16) / static_cast<size_t>(size))
    return bad(fmt::format("count {} is too large", call.count));

  if (call.kind != CallKind::kCollective) {
    if (call.kind == CallKind::kRecv && call.peer == kAnySource) {
      if (call.source == nullptr) return bad("source is NULL");
      if (call.count > 0 && call.recv == nullptr) return bad("buffer is NULL");
      return Status::Ok();
    }
    if (call.peer < 0 || call.peer >= size)
      return bad(fmt::format("peer {} is out of range [0, {})", call.peer, size));
    if (call.peer == rank) return bad("sending to or receiving from oneself is not supported");
    const void* buf = call.kind == CallKind::kSend ? call.send : call.recv;
    if (call.count > 0 && buf == nullptr) return bad("buffer is NULL");
    return Status::Ok();
  }

  if (HasRoot(call.coll) && (call.root < 0 || call.root >= size))
    return bad(fmt::format("root {} is out of range [0, {})", call.root, size));
  if (call.coll == sched::Collective::kBarrier || call.count == 0) return Status::Ok();

  // Which buffers this rank must supply (NCCL: rooted collectives need some buffers on
  // the root only).
  bool is_root = call.root == rank;
  bool need_send = true, need_recv = true;
  switch (call.coll) {
    case sched::Collective::kReduce: need_recv = is_root; break;
    case sched::Collective::kBroadcast: need_send = is_root; break;
    case sched::Collective::kGather: need_recv = is_root; break;
    case sched::Collective::kScatter: need_send = is_root; break;
    default: break;
  }
  if (need_send && call.send == nullptr) return bad("sendbuff is NULL");
  if (need_recv && call.recv == nullptr) return bad("recvbuff is NULL");
  return Status::Ok();
}

}  // namespace weft::comm
