// The header in front of every data message, on every transport. It lets the receiver
// check that the message is the one it expects (same collective, same call sequence
// number, same step, same length) and report a mismatch instead of corrupting memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace weft::transport {

inline constexpr uint32_t kWireMagic = 0x54464557;  // "WEFT" little-endian
// 2: dtype_op carries the root tag (the header layout is unchanged).
inline constexpr uint16_t kWireVersion = 2;

// What kind of call a message belongs to: a sched::Collective value, or kPointToPoint.
inline constexpr uint16_t kPointToPoint = 0x100;
// The host-side rounds of a collective on device buffers (docs/GPU.md): handle
// exchange and the barriers between its device phases.
inline constexpr uint16_t kDeviceSync = 0x101;
// The fingerprint exchange that WEFT_CHECK_CALLS runs before each collective
// (comm/call_check.h).
inline constexpr uint16_t kCallCheck = 0x102;
// The exchange of the links each rank uses, once after connecting, from which the
// planner's inter-host figures are agreed (comm/detect_links.h).
inline constexpr uint16_t kLinkDetection = 0x103;

#pragma pack(push, 1)
struct WireHeader {
  uint32_t magic = kWireMagic;
  uint16_t version = kWireVersion;
  uint16_t kind = 0;     // sched::Collective or kPointToPoint
  uint64_t seq = 0;      // per-communicator call number (p2p: per-peer counter)
  uint32_t step = 0;     // message index within the call between this pair (p2p: the tag)
  uint32_t dtype_op = 0; // root tag << 16 | dtype << 8 | redop (PackDtypeOp)
  uint64_t bytes = 0;    // payload length that follows the header
};
#pragma pack(pop)
static_assert(sizeof(WireHeader) == 32, "WireHeader is 32 bytes on the wire");

// The dtype_op field: the root tag in the high 16 bits, then the core/types.h DataType
// and RedOp values, 8 bits each. The root tag is (root + 1) mod 2^16 for a rooted
// collective and 0 otherwise (root -1), so that ranks passing different roots fail at
// the first message between them instead of exchanging data under two schedules. Roots
// that differ by a multiple of 65536 share a tag; WEFT_CHECK_CALLS catches those too.
inline constexpr uint32_t PackDtypeOp(uint32_t dtype, uint32_t redop, int root = -1) {
  return ((static_cast<uint32_t>(root + 1) & 0xffffu) << 16) | ((dtype & 0xffu) << 8) |
         (redop & 0xffu);
}

// An abort frame: a rank whose communicator fails sends it to each peer just before it
// shuts its links, so the peers' errors carry the original cause (the rank that died,
// the call that timed out) rather than "connection reset". Header: kind kAbortFrame,
// dtype_op = the sender's Code, bytes = length of the cause text that follows instead of
// a payload (at most kMaxAbortText). It is only sent between messages, so a receiver
// reading a header never finds one inside a payload.
inline constexpr uint16_t kAbortFrame = 0x200;
inline constexpr uint64_t kMaxAbortText = 1024;

WireHeader AbortHeader(Code code, uint64_t text_bytes);
// True for a header with weft's magic and version and kind kAbortFrame.
bool IsAbortFrame(const WireHeader& h);
// Shortens a cause to kMaxAbortText bytes, keeping its start and its end (where a
// forwarded cause keeps the original failure).
std::string AbortText(const Status& cause);
// What `self` reports when `peer` sent an abort frame with `text` (possibly truncated):
// Unavailable, naming the peer and quoting its cause.
Status PeerFailed(int self, int peer, const std::string& via, std::string_view text);

// "allreduce seq 7 step 3 float32/sum 4096 bytes", "reduce seq 2 step 0 int32/max root 3 8 bytes",
// "p2p seq 4 tag -1 uint8/sum 64 bytes"
std::string Describe(const WireHeader& h);

// Checks a header that `self` received from `peer` against the one its RecvOp expects.
// ProtocolError ("garbage from rank P") when magic or version is wrong: the bytes are
// not a weft header. InvalidUsage naming both ranks and both Describe() strings when
// kind, seq, step, dtype_op or bytes differ: the ranks made different calls. `via`
// ("tcp 10.0.0.2:4312") is named in the garbage error, where the path matters.
Status CheckHeader(const WireHeader& got, const WireHeader& expect, int self, int peer,
                   const std::string& via = "");

}  // namespace weft::transport
