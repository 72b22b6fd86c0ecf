// Connection authentication: every store and tcp data connection proves, before anything
// else crosses it, that both ends hold the job's key. The key never crosses the wire.
//
// Handshake (client = the side that connects):
//   client -> server  hello      role, claimed rank, context (comm id; 0 for the store),
//                                client nonce (32 random bytes)
//   server -> client  challenge  server nonce, MAC_s = HMAC(key, "weft-auth-v1 server" |
//                                hello frame | server nonce)
//   client -> server  proof      MAC_c = HMAC(key, "weft-auth-v1 client" | hello frame |
//                                server nonce)
//   server -> client  verdict    accepted or rejected
// Each side's MAC covers both nonces, the role, the rank and the context, so a recorded
// handshake is worthless on a new connection (fresh server nonce), and a proof made for
// one role, rank or communicator does not pass for another. The client checks MAC_s
// first, so it never talks to a server outside the job either.
//
// Frames: "WFTA" | u8 version | u8 kind | u16 body length (little-endian) | body; each
// kind has one fixed body length. ParseAuthFrame is pure (fuzzed:
// tests/fuzz/auth_frame_fuzz.cc); AuthServer and AuthClient are byte-in/byte-out state
// machines with no I/O, so the store's poll loop and the tcp acceptor drive them without
// ever blocking; Authenticate is the blocking client used by connecting sides.
//
// This authenticates; it does not encrypt or protect later traffic (docs/RELIABILITY.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/deadline.h"
#include "core/status.h"

namespace weft::net {

using AuthNonce = std::array<uint8_t, 32>;
using AuthMac = std::array<uint8_t, 32>;

// The job's 32-byte key (never printed, never sent).
struct AuthKey {
  std::array<uint8_t, 32> bytes{};
  std::string_view view() const {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
};

// HMAC-SHA256(label, material): a key from any string (WEFT_SECRET, a random secret,
// or the job's identity); `label` keeps keys derived for different uses apart.
AuthKey DeriveAuthKey(std::string_view label, std::string_view material);

enum class AuthRole : uint8_t { kStore = 1, kData = 2 };
const char* AuthRoleName(AuthRole role);

enum class AuthKind : uint8_t { kHello = 1, kChallenge = 2, kProof = 3, kVerdict = 4 };

inline constexpr size_t kAuthHeadBytes = 8;
// How long a server waits for a connection's hello and proof before closing it: a
// legitimate client answers at once, so this bounds only silent or stalled ones.
inline constexpr double kAuthHandshakeSeconds = 10.0;

struct AuthFrame {
  size_t consumed = 0;  // bytes of the input this frame used; 0: incomplete, read more
  AuthKind kind = AuthKind::kHello;
  std::string_view frame;  // the whole frame (head + body), a view into the input
  std::string_view body;
};

// Parses the first frame of `bytes`. Ok with consumed == 0 when more bytes are needed
// (never more than the largest frame); ProtocolError for a foreign magic, another
// version, an unknown kind, or a body length that is not that kind's.
Result<AuthFrame> ParseAuthFrame(std::string_view bytes);

struct AuthHello {
  AuthRole role = AuthRole::kStore;
  int32_t rank = -1;
  uint64_t context = 0;
  AuthNonce nonce{};
};
// ProtocolError for an unknown role.
Result<AuthHello> DecodeHello(std::string_view body);
std::string EncodeHello(const AuthHello& hello);

// Server side. Feed it what arrived; it appends what to send to `out`.
// Thread-safety: one connection, one thread.
class AuthServer {
 public:
  // Accepts clients of `role` whose hello names `context`.
  AuthServer(const AuthKey& key, AuthRole role, uint64_t context);
  // Consumes complete frames from the front of `in` and returns how many bytes it used.
  // An error is the reason to reject (a rejected verdict may have been appended to `out`;
  // send it if you can, then close).
  Result<size_t> Feed(std::string_view in, std::string* out);
  bool done() const { return state_ == State::kDone; }
  // The authenticated hello (valid once done()).
  const AuthHello& hello() const { return hello_; }

 private:
  enum class State { kAwaitHello, kAwaitProof, kDone, kFailed };
  AuthKey key_;
  AuthRole role_;
  uint64_t context_;
  State state_ = State::kAwaitHello;
  std::string hello_frame_;
  AuthHello hello_;
  AuthNonce nonce_{};
};

// Client side, without I/O.
class AuthClient {
 public:
  AuthClient(const AuthKey& key, AuthRole role, int32_t rank, uint64_t context);
  // The hello frame (draws the client nonce).
  Result<std::string> Hello();
  // Checks the server's challenge; returns the proof frame to send.
  Result<std::string> Answer(const AuthFrame& challenge);
  // Ok when the verdict accepts.
  Status Verdict(const AuthFrame& verdict);

 private:
  AuthKey key_;
  AuthHello hello_;
  std::string hello_frame_;
};

// Runs the client side on a connected socket, bounded by `deadline`. `peer` names the
// server in errors. Errors: PermissionDenied-like ProtocolError when the server does not
// hold the key or rejects ours; DeadlineExceeded / Unavailable from the socket.
Status Authenticate(int fd, const AuthKey& key, AuthRole role, int32_t rank, uint64_t context,
                    const std::string& peer, const Deadline& deadline);

}  // namespace weft::net
