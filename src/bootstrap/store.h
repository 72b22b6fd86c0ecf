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
// The server validates every length against the frame and a maximum (kMaxFrame);
// anything malformed closes that connection and leaves the store serving the others.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "net/socket.h"

namespace weft::bootstrap {

inline constexpr size_t kMaxFrame = 64u << 20;

class StoreServer {
 public:
  // Starts serving on `addr` (port 0: any free port) in a background thread.
  static Result<std::unique_ptr<StoreServer>> Start(const net::SockAddr& addr);
  ~StoreServer();  // stops the thread and closes every connection
  // The address clients should connect to (the bound port filled in).
  const net::SockAddr& address() const;

  struct Impl;
 private:
  explicit StoreServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class StoreClient {
 public:
  // Connects (retrying until `deadline`: the server may not be up yet).
  static Result<std::unique_ptr<StoreClient>> Connect(const net::SockAddr& addr,
                                                      const Deadline& deadline);
  ~StoreClient();

  Status Set(const std::string& key, const std::string& value, const Deadline& deadline);
  // Waits until `key` exists. DeadlineExceeded message names the key.
  Result<std::string> Get(const std::string& key, const Deadline& deadline);
  // Atomically adds `delta` to the integer at `key` (absent: 0); returns the new value.
  Result<int64_t> Add(const std::string& key, int64_t delta, const Deadline& deadline);
  // Non-blocking existence check.
  Result<bool> Check(const std::string& key, const Deadline& deadline);

 private:
  explicit StoreClient(net::Fd fd);
  net::Fd fd_;
};

}  // namespace weft::bootstrap
