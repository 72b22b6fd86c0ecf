// The store's data and its parked Gets, with no sockets or threads: the server feeds it
// parsed requests tagged with a connection id and sends back the replies it produces.
//
// Thread-safety: none; the server's single thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bootstrap/store_protocol.h"

namespace weft::bootstrap {

class StoreTable {
 public:
  // An encoded reply for connection `conn`.
  struct Delivery {
    uint64_t conn;
    std::string reply;
  };

  // Applies `req` from `conn`. Replies (to `conn`, and to parked Gets that a Set or Add
  // satisfies) are appended to `out`. Returns true when the request was a Get for an
  // absent key: it is parked, and `conn` must send nothing else until it is answered.
  bool Apply(uint64_t conn, const StoreRequest& req, std::vector<Delivery>* out);
  // `conn` is gone: drops its parked Get, if any.
  void Forget(uint64_t conn);

  size_t parked() const { return parked_.size(); }

 private:
  void Store(uint64_t conn, const std::string& key, std::string value,
             std::vector<Delivery>* out);

  std::map<std::string, std::string> data_;
  std::multimap<std::string, uint64_t> waiters_;  // key -> connections parked on it
  std::map<uint64_t, std::string> parked_;        // connection -> key it waits for
};

}  // namespace weft::bootstrap
