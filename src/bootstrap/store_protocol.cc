#include "bootstrap/store_protocol.h"

#include <fmt/format.h>

namespace weft::bootstrap {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutI64(std::string& out, int64_t v) {
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

int64_t GetI64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return static_cast<int64_t>(v);
}

const char* StoreCmdName(StoreCmd cmd) {
  switch (cmd) {
    case StoreCmd::kSet: return "set";
    case StoreCmd::kGet: return "get";
    case StoreCmd::kAdd: return "add";
    case StoreCmd::kCheck: return "check";
  }
  return "?";
}

namespace {
bool HasTail(StoreCmd cmd) { return cmd == StoreCmd::kSet || cmd == StoreCmd::kAdd; }
}  // namespace

Result<ParsedRequest> ParseRequest(std::string_view bytes, size_t max_frame) {
  ParsedRequest out;
  if (bytes.size() < 4) return out;
  // Every length is checked against what is left of the frame before it is used, in
  // size_t arithmetic on values that are each at most 2^32, so nothing can wrap.
  const size_t total = GetU32(bytes.data());
  if (total > max_frame)
    return ProtocolError(fmt::format("frame of {} bytes exceeds the maximum {}", total, max_frame));
  if (total < 5) return ProtocolError(fmt::format("frame of {} bytes is too short", total));
  if (bytes.size() < 4 + total) return out;  // incomplete: wait for the rest

  std::string_view f = bytes.substr(4, total);  // the frame body
  size_t pos = 0;
  const uint8_t raw_cmd = static_cast<uint8_t>(f[pos++]);
  if (raw_cmd < 1 || raw_cmd > 4) return ProtocolError(fmt::format("unknown command {}", raw_cmd));
  out.request.cmd = static_cast<StoreCmd>(raw_cmd);

  const size_t key_len = GetU32(f.data() + pos);
  pos += 4;
  if (key_len == 0) return ProtocolError("empty key");
  if (key_len > kMaxKeyLen)
    return ProtocolError(fmt::format("key of {} bytes exceeds the maximum {}", key_len, kMaxKeyLen));
  if (key_len > f.size() - pos)
    return ProtocolError(fmt::format("key length {} overruns the frame", key_len));
  out.request.key.assign(f.data() + pos, key_len);
  pos += key_len;

  if (HasTail(out.request.cmd)) {
    if (f.size() - pos < 4) return ProtocolError("frame ends before the value length");
    const size_t val_len = GetU32(f.data() + pos);
    pos += 4;
    if (val_len > f.size() - pos)
      return ProtocolError(fmt::format("value length {} overruns the frame", val_len));
    out.request.value.assign(f.data() + pos, val_len);
    pos += val_len;
    if (f.size() - pos < 8) return ProtocolError("frame ends before the integer argument");
    out.request.arg = GetI64(f.data() + pos);
    pos += 8;
    if (out.request.cmd == StoreCmd::kAdd && val_len != 0)
      return ProtocolError("add carries a value");
  }
  if (pos != f.size())
    return ProtocolError(fmt::format("{} trailing bytes in a {} frame", f.size() - pos,
                                     StoreCmdName(out.request.cmd)));
  out.consumed = 4 + total;
  return out;
}

std::string EncodeRequest(const StoreRequest& r) {
  std::string body;
  body.push_back(static_cast<char>(r.cmd));
  PutU32(body, static_cast<uint32_t>(r.key.size()));
  body += r.key;
  if (HasTail(r.cmd)) {
    PutU32(body, static_cast<uint32_t>(r.value.size()));
    body += r.value;
    PutI64(body, r.arg);
  }
  std::string out;
  out.reserve(4 + body.size());
  PutU32(out, static_cast<uint32_t>(body.size()));
  out += body;
  return out;
}

std::string EncodeReply(StoreReply status, std::string_view payload) {
  std::string out;
  out.reserve(5 + payload.size());
  PutU32(out, static_cast<uint32_t>(1 + payload.size()));
  out.push_back(static_cast<char>(status));
  out.append(payload.data(), payload.size());
  return out;
}

}  // namespace weft::bootstrap
