// StoreClient: one request, one response, each bounded by the caller's deadline.
#include <chrono>

#include <fmt/format.h>

#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"

namespace weft::bootstrap {

Result<net::Fd> StoreClient::Open(const net::SockAddr& addr, const net::AuthKey& key,
                                  const Deadline& deadline) {
  WEFT_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(addr, deadline));
  WEFT_RETURN_IF_ERROR(net::Authenticate(fd.get(), key, net::AuthRole::kStore, -1, 0,
                                         "store " + addr.ToString(), deadline));
  return fd;
}

Result<std::unique_ptr<StoreClient>> StoreClient::Connect(const net::SockAddr& addr,
                                                          const net::AuthKey& key,
                                                          const Deadline& deadline) {
  auto fd = Open(addr, key, deadline);
  if (!fd.ok()) return fd.status().WithContext("store client");
  return std::unique_ptr<StoreClient>(new StoreClient(std::move(fd.value()), addr, key));
}

StoreClient::StoreClient(net::Fd fd, const net::SockAddr& addr, const net::AuthKey& key)
    : fd_(std::move(fd)), addr_(addr), key_(key) {}

StoreClient::~StoreClient() = default;

Result<std::string> StoreClient::Call(const StoreRequest& req, const Deadline& deadline,
                                      const std::string& what) {
  if (req.key.empty()) return InvalidArgument(what + ": empty key");
  if (req.key.size() > kMaxKeyLen)
    return InvalidArgument(fmt::format("{}: key of {} bytes exceeds {}", what, req.key.size(),
                                       kMaxKeyLen));
  if (req.value.size() > kMaxFrame - req.key.size() - 32)
    return InvalidArgument(fmt::format("{}: value of {} bytes exceeds the store's frame limit",
                                       what, req.value.size()));
  auto start = std::chrono::steady_clock::now();
  auto fail = [&](const Status& s) -> Status {
    fd_.reset();  // the stream position is unknown now: reconnect on the next call
    if (s.code() == Code::kDeadlineExceeded) {
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return DeadlineExceeded(fmt::format("{}: timed out after {:.1f} s", what, secs));
    }
    if (s.code() == Code::kUnavailable)
      return Unavailable(fmt::format("{}: the store closed the connection (server gone?)", what));
    return s.WithContext(what);
  };
  if (!fd_.valid()) {
    auto fd = Open(addr_, key_, deadline);
    if (!fd.ok()) return fd.status().WithContext(what);
    fd_ = std::move(fd.value());
  }
  std::string frame = EncodeRequest(req);
  Status s = net::WriteFull(fd_.get(), frame.data(), frame.size(), deadline);
  if (!s.ok()) return fail(s);
  char head[5];
  s = net::ReadFull(fd_.get(), head, sizeof(head), deadline);
  if (!s.ok()) return fail(s);
  size_t total = GetU32(head);
  if (total < 1 || total > kMaxFrame)
    return fail(ProtocolError(fmt::format("response of {} bytes", total)));
  std::string payload(total - 1, '\0');
  s = net::ReadFull(fd_.get(), payload.data(), payload.size(), deadline);
  if (!s.ok()) return fail(s);
  auto status = static_cast<StoreReply>(head[4]);
  if (status == StoreReply::kError) return InvalidArgument(what + ": " + payload);
  if (status != StoreReply::kOk)
    return fail(ProtocolError(fmt::format("unknown response status {}", int(head[4]))));
  return payload;
}

Status StoreClient::Set(const std::string& key, const std::string& value,
                        const Deadline& deadline) {
  StoreRequest req{StoreCmd::kSet, key, value, 0};
  auto r = Call(req, deadline, fmt::format("store set '{}' at {}", key, addr_.ToString()));
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> StoreClient::Get(const std::string& key, const Deadline& deadline) {
  StoreRequest req{StoreCmd::kGet, key, "", 0};
  return Call(req, deadline, fmt::format("store get '{}' at {}", key, addr_.ToString()));
}

Result<int64_t> StoreClient::Add(const std::string& key, int64_t delta,
                                 const Deadline& deadline) {
  std::string what = fmt::format("store add '{}' at {}", key, addr_.ToString());
  StoreRequest req{StoreCmd::kAdd, key, "", delta};
  WEFT_ASSIGN_OR_RETURN(std::string payload, Call(req, deadline, what));
  if (payload.size() != 8) {
    fd_.reset();
    return ProtocolError(fmt::format("{}: reply of {} bytes, expected 8", what, payload.size()));
  }
  return GetI64(payload.data());
}

Result<bool> StoreClient::Check(const std::string& key, const Deadline& deadline) {
  std::string what = fmt::format("store check '{}' at {}", key, addr_.ToString());
  StoreRequest req{StoreCmd::kCheck, key, "", 0};
  WEFT_ASSIGN_OR_RETURN(std::string payload, Call(req, deadline, what));
  if (payload.size() != 1) {
    fd_.reset();
    return ProtocolError(fmt::format("{}: reply of {} bytes, expected 1", what, payload.size()));
  }
  return payload[0] != 0;
}

}  // namespace weft::bootstrap
