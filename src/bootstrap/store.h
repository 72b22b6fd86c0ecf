// The rendezvous key-value store: a small TCP server (one per job, hosted by weftrun,
// by rank 0, or by the process that called weftGetUniqueId) and a client.
//
// Keys and values are byte strings. Get waits until the key exists (bounded by a
// deadline), which is what rendezvous needs: every rank Sets its card, then Gets the
// cards of all the others.
//
// Wire protocol (all integers little-endian), one request then one response:
//   request:  u32 total_len | u8 cmd | u32 key_len | key | [u32 val_len | val | i64 arg]
//   response: u32 total_len | u8 status | payload
// (details in store_protocol.h)
// The server validates every length against the frame and a maximum (kMaxFrame);
// anything malformed closes that connection and leaves the store serving the others.
//
// Before any request, each connection runs the authentication handshake (net/auth.h,
// role "store"): a client that does not prove it holds the job's key within
// net::kAuthHandshakeSeconds is logged (WARN, with its address and the reason) and
// closed; the server handles it inside its poll loop, so a silent client blocks nobody.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/auth.h"
#include "net/socket.h"

namespace weft::bootstrap {

inline constexpr size_t kMaxFrame = 64u << 20;

class StoreServer {
 public:
  // Starts serving on `addr` (port 0: any free port) in a background thread, to clients
  // that hold `key`.
  static Result<std::unique_ptr<StoreServer>> Start(const net::SockAddr& addr,
                                                    const net::AuthKey& key);
  ~StoreServer();  // stops the thread and closes every connection
  // The address clients should connect to (the bound port filled in). When started on a
  // wildcard address (0.0.0.0 / ::), publish a real interface address with this port.
  const net::SockAddr& address() const;

  struct Impl;
 private:
  explicit StoreServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct StoreRequest;

// Synchronous client: each call sends one request and waits for its response.
// Thread-safety: not thread-safe; use one client per thread (a parked Get would block
// every other call on a shared connection anyway).
// Errors: DeadlineExceeded names the key and the store address; Unavailable when the
// server closed the connection (it exited); InvalidArgument for a key longer than
// kMaxKeyLen or a frame over kMaxFrame, or an Add on a value that is not an integer.
// After a failed call (e.g. a Get that timed out while the server still holds it) the
// connection is dropped and the next call reconnects, so a late answer can never be
// mistaken for the answer to a later request.
class StoreClient {
 public:
  // Connects (retrying until `deadline`: the server may not be up yet) and
  // authenticates with `key` (so does every reconnection). A server that does not hold
  // the key, or rejects ours, is a ProtocolError naming the store's address.
  static Result<std::unique_ptr<StoreClient>> Connect(const net::SockAddr& addr,
                                                      const net::AuthKey& key,
                                                      const Deadline& deadline);
  ~StoreClient();

  Status Set(const std::string& key, const std::string& value, const Deadline& deadline);
  // Waits until `key` exists. DeadlineExceeded message names the key.
  Result<std::string> Get(const std::string& key, const Deadline& deadline);
  // Atomically adds `delta` to the integer at `key` (absent: 0); returns the new value.
  // The value is stored as decimal text, so a Get of the key returns e.g. "3".
  Result<int64_t> Add(const std::string& key, int64_t delta, const Deadline& deadline);
  // Non-blocking existence check.
  Result<bool> Check(const std::string& key, const Deadline& deadline);

  const net::SockAddr& address() const { return addr_; }

 private:
  StoreClient(net::Fd fd, const net::SockAddr& addr, const net::AuthKey& key);
  // A new authenticated connection to addr_.
  static Result<net::Fd> Open(const net::SockAddr& addr, const net::AuthKey& key,
                              const Deadline& deadline);
  // Sends `req`, returns the OK payload. `what` prefixes every error.
  Result<std::string> Call(const StoreRequest& req, const Deadline& deadline,
                           const std::string& what);
  net::Fd fd_;
  net::SockAddr addr_;
  net::AuthKey key_;
};

}  // namespace weft::bootstrap
