// Describing and checking wire headers. The checks here are what turns "the ranks
// called different collectives" from silent memory corruption into an error that
// names both ranks and both calls.
#include "transport/wire.h"

#include <fmt/format.h>

#include "core/types.h"

namespace weft::transport {
namespace {

// sched::Collective values in order. Kept as names here (not via sched/) because the
// transport layer must not depend on the scheduler (sched/schedule.h lists the enum).
constexpr const char* kCollectiveNames[] = {
    "allreduce", "reduce", "broadcast", "allgather", "reducescatter",
    "alltoall",  "gather", "scatter",   "barrier",
};
constexpr int kNumKinds = sizeof(kCollectiveNames) / sizeof(kCollectiveNames[0]);

std::string KindName(uint16_t kind) {
  if (kind < kNumKinds) return kCollectiveNames[kind];
  if (kind == kPointToPoint) return "p2p";
  if (kind == kDeviceSync) return "device-buffer sync";
  if (kind == kCallCheck) return "call check";
  if (kind == kLinkDetection) return "link detection";
  if (kind == kAbortFrame) return "abort";
  return fmt::format("kind {:#x}", kind);
}

uint32_t RootTag(uint32_t dtype_op) { return dtype_op >> 16; }
uint32_t DtypeAndOp(uint32_t dtype_op) { return dtype_op & 0xffffu; }

std::string DtypeOpName(uint32_t dtype_op) {
  uint32_t dtype = (dtype_op >> 8) & 0xffu;
  uint32_t op = dtype_op & 0xffu;
  if (dtype < static_cast<uint32_t>(kNumDataTypes) && op < static_cast<uint32_t>(kNumRedOps)) {
    std::string name = fmt::format("{}/{}", DataTypeName(static_cast<DataType>(dtype)),
                                   RedOpName(static_cast<RedOp>(op)));
    // The tag is root + 1 mod 2^16 (PackDtypeOp), so this is the root for any world
    // smaller than 65536 ranks.
    if (RootTag(dtype_op) != 0) name += fmt::format(" root {}", RootTag(dtype_op) - 1);
    return name;
  }
  return fmt::format("dtype_op {:#x}", dtype_op);
}

// The likeliest cause of a mismatch, from the first field that differs, so the user
// reads a diagnosis rather than two headers to compare by eye.
const char* MismatchCause(const WireHeader& got, const WireHeader& expect) {
  if (got.kind != expect.kind) return "the ranks called different collectives";
  if (got.seq != expect.seq)
    return "the ranks are at different calls (one skipped or repeated a collective)";
  if (got.kind == kPointToPoint && got.step != expect.step)
    return "the receive names another tag than the next message's (over ofi and links "
           "striped over several rails, weft takes a pair's messages in the order sent)";
  if (DtypeAndOp(got.dtype_op) != DtypeAndOp(expect.dtype_op))
    return "the ranks passed different data types or reduction operators";
  if (RootTag(got.dtype_op) != RootTag(expect.dtype_op)) return "the ranks passed different roots";
  if (got.bytes != expect.bytes) return "the ranks passed different counts";
  return "the ranks run different schedules (different algorithm, root or world size)";
}

}  // namespace

WireHeader AbortHeader(Code code, uint64_t text_bytes) {
  WireHeader h;
  h.kind = kAbortFrame;
  h.dtype_op = static_cast<uint32_t>(code);
  h.bytes = text_bytes;
  return h;
}

bool IsAbortFrame(const WireHeader& h) {
  return h.magic == kWireMagic && h.version == kWireVersion && h.kind == kAbortFrame;
}

std::string AbortText(const Status& cause) {
  std::string text = cause.ToString();
  if (text.size() <= kMaxAbortText) return text;
  constexpr size_t kHead = 256;
  constexpr std::string_view kCut = " [...] ";
  const size_t tail = kMaxAbortText - kHead - kCut.size();
  return text.substr(0, kHead) + std::string(kCut) + text.substr(text.size() - tail);
}

Status PeerFailed(int self, int peer, const std::string& via, std::string_view text) {
  std::string cause(text.substr(0, kMaxAbortText));
  // The text comes off the wire: keep it printable.
  for (char& c : cause)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) c = ' ';
  return Unavailable(fmt::format("rank {} was told by rank {}{} that it failed: {}", self, peer,
                                 via.empty() ? "" : " (" + via + ")",
                                 cause.empty() ? "(no cause given)" : cause));
}

std::string Describe(const WireHeader& h) {
  if (h.kind == kPointToPoint) {  // one message per call; step carries the caller's tag
    return fmt::format("p2p seq {} tag {} {} {} bytes", h.seq, static_cast<int32_t>(h.step),
                       DtypeOpName(h.dtype_op), h.bytes);
  }
  return fmt::format("{} seq {} step {} {} {} bytes", KindName(h.kind), h.seq, h.step,
                     DtypeOpName(h.dtype_op), h.bytes);
}

Status CheckHeader(const WireHeader& got, const WireHeader& expect, int self, int peer,
                   const std::string& via) {
  if (got.magic != kWireMagic || got.version != kWireVersion) {
    return ProtocolError(
        fmt::format("rank {} received garbage from rank {}{}: header magic {:#010x} version {} "
                    "(expected {:#010x} version {})",
                    self, peer, via.empty() ? "" : " (" + via + ")", got.magic, got.version,
                    kWireMagic, kWireVersion));
  }
  if (got.kind != expect.kind || got.seq != expect.seq || got.step != expect.step ||
      got.dtype_op != expect.dtype_op || got.bytes != expect.bytes) {
    return InvalidUsage(fmt::format("rank {} expected {} from rank {}, but rank {} sent {}: {}",
                                    self, Describe(expect), peer, peer, Describe(got),
                                    MismatchCause(got, expect)));
  }
  return Status::Ok();
}

}  // namespace weft::transport
