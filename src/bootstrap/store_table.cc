#include "bootstrap/store_table.h"

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

namespace weft::bootstrap {
namespace {

std::string I64Bytes(int64_t v) {
  std::string s;
  PutI64(s, v);
  return s;
}

// Strict decimal int64 (what Add writes); strtoll alone accepts spaces and junk suffixes.
bool ParseI64(const std::string& s, int64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (!(s[i] >= '0' && s[i] <= '9') && !(i == 0 && s[i] == '-' && s.size() > 1)) return false;
  errno = 0;
  long long x = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *v = x;
  return true;
}

}  // namespace

void StoreTable::Store(uint64_t conn, const std::string& key, std::string value,
                       std::vector<Delivery>* out) {
  auto [first, last] = waiters_.equal_range(key);
  for (auto it = first; it != last; ++it) {
    out->push_back({it->second, EncodeReply(StoreReply::kOk, value)});
    parked_.erase(it->second);
  }
  waiters_.erase(first, last);
  data_[key] = std::move(value);
}

bool StoreTable::Apply(uint64_t conn, const StoreRequest& req, std::vector<Delivery>* out) {
  switch (req.cmd) {
    case StoreCmd::kSet:
      out->push_back({conn, EncodeReply(StoreReply::kOk, "")});
      Store(conn, req.key, req.value, out);
      return false;
    case StoreCmd::kGet: {
      auto it = data_.find(req.key);
      if (it != data_.end()) {
        out->push_back({conn, EncodeReply(StoreReply::kOk, it->second)});
        return false;
      }
      waiters_.emplace(req.key, conn);
      parked_[conn] = req.key;
      return true;
    }
    case StoreCmd::kAdd: {
      int64_t now = 0;
      auto it = data_.find(req.key);
      if (it != data_.end() && !ParseI64(it->second, &now)) {
        out->push_back({conn, EncodeReply(StoreReply::kError,
                                          fmt::format("add to '{}': the value there is not an "
                                                      "integer", req.key))});
        return false;
      }
      int64_t next;
      if (__builtin_add_overflow(now, req.arg, &next)) {
        out->push_back({conn, EncodeReply(StoreReply::kError,
                                          fmt::format("add {} to '{}' (= {}) overflows int64",
                                                      req.arg, req.key, now))});
        return false;
      }
      out->push_back({conn, EncodeReply(StoreReply::kOk, I64Bytes(next))});
      Store(conn, req.key, std::to_string(next), out);
      return false;
    }
    case StoreCmd::kCheck: {
      char present = data_.count(req.key) ? 1 : 0;
      out->push_back({conn, EncodeReply(StoreReply::kOk, std::string(1, present))});
      return false;
    }
  }
  return false;
}

void StoreTable::Forget(uint64_t conn) {
  auto p = parked_.find(conn);
  if (p == parked_.end()) return;
  auto [first, last] = waiters_.equal_range(p->second);
  for (auto it = first; it != last; ++it) {
    if (it->second == conn) {
      waiters_.erase(it);
      break;
    }
  }
  parked_.erase(p);
}

}  // namespace weft::bootstrap
