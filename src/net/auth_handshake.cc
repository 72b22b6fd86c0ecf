// The handshake's frames and state machines (auth.h); no sockets here.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "core/hmac.h"
#include "core/random_bytes.h"
#include "net/auth.h"

namespace weft::net {
namespace {

constexpr char kMagic[4] = {'W', 'F', 'T', 'A'};
constexpr uint8_t kVersion = 1;
constexpr size_t kHelloBody = 48;  // role, 3 pad, i32 rank, u64 context, nonce
constexpr size_t kChallengeBody = 64;
constexpr size_t kProofBody = 32;
constexpr size_t kVerdictBody = 1;
constexpr std::string_view kServerLabel = "weft-auth-v1 server";
constexpr std::string_view kClientLabel = "weft-auth-v1 client";

size_t BodyBytes(AuthKind kind) {
  switch (kind) {
    case AuthKind::kHello: return kHelloBody;
    case AuthKind::kChallenge: return kChallengeBody;
    case AuthKind::kProof: return kProofBody;
    case AuthKind::kVerdict: return kVerdictBody;
  }
  return 0;
}

std::string Frame(AuthKind kind, std::string_view body) {
  std::string f(kMagic, sizeof(kMagic));
  f += static_cast<char>(kVersion);
  f += static_cast<char>(kind);
  f += static_cast<char>(body.size() & 0xff);
  f += static_cast<char>(body.size() >> 8);
  f += body;
  return f;
}

std::string_view View(const std::array<uint8_t, 32>& a) {
  return {reinterpret_cast<const char*>(a.data()), a.size()};
}

AuthMac Mac(const AuthKey& key, std::string_view label, std::string_view hello_frame,
            const AuthNonce& server_nonce) {
  return HmacSha256Builder(key.view())
      .Update(label)
      .Update(hello_frame)
      .Update(View(server_nonce))
      .Final();
}

std::string Verdict(bool accepted) {
  return Frame(AuthKind::kVerdict, std::string(1, accepted ? '\1' : '\0'));
}

}  // namespace

AuthKey DeriveAuthKey(std::string_view label, std::string_view material) {
  AuthKey k;
  k.bytes = HmacSha256(label, material);
  return k;
}

const char* AuthRoleName(AuthRole role) {
  switch (role) {
    case AuthRole::kStore: return "store";
    case AuthRole::kData: return "data";
  }
  return "unknown";
}

Result<AuthFrame> ParseAuthFrame(std::string_view bytes) {
  AuthFrame f;
  // Judge the magic as soon as its bytes are here, so garbage is rejected at once
  // instead of waiting for a full head.
  size_t have = std::min(bytes.size(), sizeof(kMagic));
  if (have > 0 && std::memcmp(bytes.data(), kMagic, have) != 0)
    return ProtocolError("not a weft authentication frame (bad magic)");
  if (bytes.size() < kAuthHeadBytes) return f;
  auto version = static_cast<uint8_t>(bytes[4]);
  if (version != kVersion)
    return ProtocolError(fmt::format("authentication version {}, expected {}", version, kVersion));
  auto kind = static_cast<uint8_t>(bytes[5]);
  if (kind < 1 || kind > 4) return ProtocolError(fmt::format("unknown frame kind {}", kind));
  size_t len = static_cast<uint8_t>(bytes[6]) | (size_t(static_cast<uint8_t>(bytes[7])) << 8);
  f.kind = static_cast<AuthKind>(kind);
  if (len != BodyBytes(f.kind))
    return ProtocolError(fmt::format("frame kind {} with a body of {} bytes, expected {}", kind,
                                     len, BodyBytes(f.kind)));
  if (bytes.size() < kAuthHeadBytes + len) return f;
  f.consumed = kAuthHeadBytes + len;
  f.frame = bytes.substr(0, f.consumed);
  f.body = bytes.substr(kAuthHeadBytes, len);
  return f;
}

std::string EncodeHello(const AuthHello& h) {
  std::string b(kHelloBody, '\0');
  b[0] = static_cast<char>(h.role);
  for (int i = 0; i < 4; ++i) b[4 + i] = static_cast<char>(uint32_t(h.rank) >> (8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = static_cast<char>(h.context >> (8 * i));
  std::memcpy(b.data() + 16, h.nonce.data(), h.nonce.size());
  return Frame(AuthKind::kHello, b);
}

Result<AuthHello> DecodeHello(std::string_view body) {
  if (body.size() != kHelloBody) return ProtocolError("hello of the wrong size");
  AuthHello h;
  auto role = static_cast<uint8_t>(body[0]);
  if (role != 1 && role != 2) return ProtocolError(fmt::format("unknown role {}", role));
  if (body[1] != 0 || body[2] != 0 || body[3] != 0) return ProtocolError("hello padding not zero");
  h.role = static_cast<AuthRole>(role);
  uint32_t rank = 0;
  for (int i = 0; i < 4; ++i) rank |= uint32_t(static_cast<uint8_t>(body[4 + i])) << (8 * i);
  h.rank = static_cast<int32_t>(rank);
  for (int i = 0; i < 8; ++i) h.context |= uint64_t(static_cast<uint8_t>(body[8 + i])) << (8 * i);
  std::memcpy(h.nonce.data(), body.data() + 16, h.nonce.size());
  return h;
}

AuthServer::AuthServer(const AuthKey& key, AuthRole role, uint64_t context)
    : key_(key), role_(role), context_(context) {}

Result<size_t> AuthServer::Feed(std::string_view in, std::string* out) {
  size_t used = 0;
  auto fail = [&](std::string why) -> Status {
    state_ = State::kFailed;
    return ProtocolError(std::move(why));
  };
  while (state_ == State::kAwaitHello || state_ == State::kAwaitProof) {
    auto parsed = ParseAuthFrame(in.substr(used));
    if (!parsed.ok()) return fail(parsed.status().message());
    if (parsed->consumed == 0) break;
    used += parsed->consumed;
    if (state_ == State::kAwaitHello) {
      if (parsed->kind != AuthKind::kHello) return fail("the first frame is not a hello");
      auto hello = DecodeHello(parsed->body);
      if (!hello.ok()) return fail(hello.status().message());
      if (hello->role != role_)
        return fail(fmt::format("a {} connection offered to a {} port", AuthRoleName(hello->role),
                                AuthRoleName(role_)));
      if (hello->context != context_)
        return fail(fmt::format("it is for communicator {:#x}, not {:#x}", hello->context,
                                context_));
      hello_ = hello.value();
      hello_frame_ = std::string(parsed->frame);
      WEFT_RETURN_IF_ERROR(RandomBytes(nonce_.data(), nonce_.size()));
      AuthMac mac = Mac(key_, kServerLabel, hello_frame_, nonce_);
      *out += Frame(AuthKind::kChallenge, std::string(View(nonce_)) + std::string(View(mac)));
      state_ = State::kAwaitProof;
    } else {
      if (parsed->kind != AuthKind::kProof) return fail("expected a proof after the challenge");
      AuthMac expected = Mac(key_, kClientLabel, hello_frame_, nonce_);
      if (!ConstantTimeEqual(expected.data(), parsed->body.data(), expected.size())) {
        *out += Verdict(false);
        return fail(fmt::format(
            "wrong proof from claimed rank {}: it does not hold this job's key (another job, "
            "a different WEFT_SECRET, or a replayed handshake)",
            hello_.rank));
      }
      *out += Verdict(true);
      state_ = State::kDone;
    }
  }
  if (state_ == State::kFailed) return ProtocolError("handshake already failed");
  return used;
}

AuthClient::AuthClient(const AuthKey& key, AuthRole role, int32_t rank, uint64_t context)
    : key_(key) {
  hello_.role = role;
  hello_.rank = rank;
  hello_.context = context;
}

Result<std::string> AuthClient::Hello() {
  WEFT_RETURN_IF_ERROR(RandomBytes(hello_.nonce.data(), hello_.nonce.size()));
  hello_frame_ = EncodeHello(hello_);
  return hello_frame_;
}

Result<std::string> AuthClient::Answer(const AuthFrame& challenge) {
  if (challenge.kind == AuthKind::kVerdict && challenge.body == std::string_view("\0", 1))
    return ProtocolError("the server rejected our hello");
  if (challenge.kind != AuthKind::kChallenge)
    return ProtocolError("the server's answer is not a challenge");
  AuthNonce server_nonce;
  std::memcpy(server_nonce.data(), challenge.body.data(), server_nonce.size());
  AuthMac expected = Mac(key_, kServerLabel, hello_frame_, server_nonce);
  if (!ConstantTimeEqual(expected.data(), challenge.body.data() + 32, expected.size()))
    return ProtocolError(
        "the server does not hold this job's key (another job's port, or a different "
        "WEFT_SECRET)");
  AuthMac mine = Mac(key_, kClientLabel, hello_frame_, server_nonce);
  return Frame(AuthKind::kProof, View(mine));
}

Status AuthClient::Verdict(const AuthFrame& verdict) {
  if (verdict.kind != AuthKind::kVerdict) return ProtocolError("expected the server's verdict");
  if (verdict.body[0] != 1)
    return ProtocolError("the server rejected our proof (it holds a different key)");
  return Status::Ok();
}

}  // namespace weft::net
