// The store server's state machine (bootstrap/store_table.h) driven by parsed requests
// from several connections, the way store_server.cc drives it: each request is one
// connection byte then one request frame. A connection byte with the top bit set closes
// that connection instead (StoreTable::Forget). A parked connection sends nothing more
// until it is answered, as the server guarantees.
// Properties, against a plain map kept beside the table: every reply is a well-formed
// frame; Get/Check answer what was stored; Add answers 8 bytes and stores their decimal
// value; a parked Get is answered exactly when its key is stored, with the new value;
// nobody else ever receives a reply.
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "bootstrap/store_protocol.h"
#include "bootstrap/store_table.h"
#include "fuzz_util.h"

namespace {

using namespace weft::bootstrap;

struct Reply {
  StoreReply status;
  std::string payload;
};

Reply DecodeReply(const std::string& frame) {
  WEFT_FUZZ_CHECK(frame.size() >= 5);
  WEFT_FUZZ_CHECK(GetU32(frame.data()) == frame.size() - 4);
  auto status = static_cast<StoreReply>(frame[4]);
  WEFT_FUZZ_CHECK(status == StoreReply::kOk || status == StoreReply::kError);
  return {status, frame.substr(5)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int kConns = 4;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  StoreTable table;
  std::map<std::string, std::string> model;
  std::map<uint64_t, std::string> parked;  // conn -> key it waits for

  while (!bytes.empty()) {
    const uint8_t tag = static_cast<uint8_t>(bytes[0]);
    bytes.remove_prefix(1);
    const uint64_t conn = tag % kConns;
    if (tag & 0x80) {
      table.Forget(conn);
      parked.erase(conn);
      continue;
    }
    auto parsed = ParseRequest(bytes, 1u << 16);
    if (!parsed.ok() || parsed->consumed == 0) break;
    bytes.remove_prefix(parsed->consumed);
    if (parked.count(conn)) continue;  // the server does not read from a parked connection
    const StoreRequest& req = parsed->request;

    std::vector<StoreTable::Delivery> out;
    const bool parks = table.Apply(conn, req, &out);
    if (parks) {
      WEFT_FUZZ_CHECK(req.cmd == StoreCmd::kGet && !model.count(req.key) && out.empty());
      parked[conn] = req.key;
      continue;
    }
    WEFT_FUZZ_CHECK(!out.empty() && out[0].conn == conn);
    Reply mine = DecodeReply(out[0].reply);
    bool stored = false;
    switch (req.cmd) {
      case StoreCmd::kSet:
        WEFT_FUZZ_CHECK(mine.status == StoreReply::kOk && mine.payload.empty());
        model[req.key] = req.value;
        stored = true;
        break;
      case StoreCmd::kGet:
        WEFT_FUZZ_CHECK(mine.status == StoreReply::kOk && model.count(req.key) &&
                        mine.payload == model[req.key]);
        break;
      case StoreCmd::kAdd:
        if (mine.status == StoreReply::kOk) {
          WEFT_FUZZ_CHECK(mine.payload.size() == 8);
          int64_t next = GetI64(mine.payload.data());
          if (!model.count(req.key)) WEFT_FUZZ_CHECK(next == req.arg);
          model[req.key] = std::to_string(next);
          stored = true;
        } else {
          // Adding to an absent key (0 + delta) can neither fail to parse nor overflow.
          WEFT_FUZZ_CHECK(model.count(req.key));
        }
        break;
      case StoreCmd::kCheck:
        WEFT_FUZZ_CHECK(mine.status == StoreReply::kOk && mine.payload.size() == 1 &&
                        (mine.payload[0] != 0) == (model.count(req.key) != 0));
        break;
    }
    // Everyone else in `out` is a parked Get on this key, answered with the new value.
    for (size_t i = 1; i < out.size(); ++i) {
      WEFT_FUZZ_CHECK(stored);
      auto p = parked.find(out[i].conn);
      WEFT_FUZZ_CHECK(p != parked.end() && p->second == req.key);
      Reply r = DecodeReply(out[i].reply);
      WEFT_FUZZ_CHECK(r.status == StoreReply::kOk && r.payload == model[req.key]);
      parked.erase(p);
    }
    if (stored)
      for (const auto& [c, key] : parked) WEFT_FUZZ_CHECK(key != req.key);
    WEFT_FUZZ_CHECK(table.parked() == parked.size());
  }
  return 0;
}
