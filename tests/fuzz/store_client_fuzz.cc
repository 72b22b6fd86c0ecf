// The store client's reply handling (StoreClient::Call and the Add/Check payload checks
// in bootstrap/store_client.cc). That code reads from a socket and is not callable on
// bytes, so this target plays a store server over loopback: for each input it accepts
// a fresh client connection, answers its authentication handshake (a thread plays the
// server side, so the input is only ever the store protocol), writes the input as the
// whole reply stream, closes its side, and lets the client run one call. First input byte: which call (Get, Set, Add,
// Check); the rest: the reply bytes.
// Properties: the call returns (never hangs: the server side is closed, so every read
// ends); success only for a well-formed kOk frame, whose payload is what Get returns,
// 8 bytes for Add (their value returned), 1 byte for Check; a kError frame is an
// InvalidArgument carrying the server's message.
#include <sys/socket.h>

#include <memory>
#include <thread>
#include <string>
#include <string_view>

#include "bootstrap/job_key.h"
#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "fuzz_util.h"
#include "net/socket.h"

namespace {

using namespace weft;
using namespace weft::bootstrap;

// One listener for the whole run; every input gets a new connection on it.
struct Loopback {
  net::Fd listener;
  net::SockAddr addr;
};

Loopback& Server() {
  static Loopback* lb = [] {
    auto* l = new Loopback();
    auto any = net::SockAddr::FromHostPort("127.0.0.1", 0);
    WEFT_FUZZ_CHECK(any.ok());
    auto fd = net::Listen(any.value());
    WEFT_FUZZ_CHECK(fd.ok());
    l->listener = std::move(fd).value();
    auto bound = net::LocalAddress(l->listener.get());
    WEFT_FUZZ_CHECK(bound.ok());
    l->addr = bound.value();
    return l;
  }();
  return *lb;
}

const net::AuthKey& Key() {
  static const net::AuthKey key = KeyFromSecret("store client fuzz");
  return key;
}

// The server side of the handshake on `fd`, with blocking reads of the two client frames.
void ServeHandshake(int fd, const Deadline& deadline) {
  net::AuthServer server(Key(), net::AuthRole::kStore, 0);
  for (size_t frame : {size_t{56}, size_t{40}}) {  // hello, proof
    std::string in(frame, '\0'), out;
    WEFT_FUZZ_CHECK(net::ReadFull(fd, in.data(), in.size(), deadline).ok());
    auto used = server.Feed(in, &out);
    WEFT_FUZZ_CHECK(used.ok() && used.value() == frame);
    WEFT_FUZZ_CHECK(net::WriteFull(fd, out.data(), out.size(), deadline).ok());
  }
  WEFT_FUZZ_CHECK(server.done());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  const uint8_t op = in.Byte() % 4;
  // The reply must fit in the socket buffers before the client reads it (this thread
  // writes it all first); 16 KiB always does on loopback.
  std::string_view reply = in.Take(16 << 10);

  Loopback& lb = Server();
  const Deadline deadline = Deadline::AfterSeconds(5);
  net::Fd served;
  std::thread server([&] {
    auto fd = net::Accept(lb.listener.get(), deadline);
    WEFT_FUZZ_CHECK(fd.ok());
    served = std::move(fd).value();
    ServeHandshake(served.get(), deadline);
  });
  auto client = StoreClient::Connect(lb.addr, Key(), deadline);
  server.join();
  WEFT_FUZZ_CHECK(client.ok());
  if (!net::WriteFull(served.get(), reply.data(), reply.size(), deadline).ok()) return 0;
  ::shutdown(served.get(), SHUT_WR);  // end of the reply stream: no read can wait

  // What a correct client must conclude from these bytes.
  const bool framed = reply.size() >= 5 && GetU32(reply.data()) >= 1 &&
                      GetU32(reply.data()) <= kMaxFrame &&
                      reply.size() - 4 >= GetU32(reply.data());
  const auto status = framed ? static_cast<uint8_t>(reply[4]) : 0xff;
  const std::string payload =
      framed ? std::string(reply.substr(5, GetU32(reply.data()) - 1)) : std::string();
  const bool ok_frame = framed && status == static_cast<uint8_t>(StoreReply::kOk);
  const bool error_frame = framed && status == static_cast<uint8_t>(StoreReply::kError);

  Status s;
  switch (op) {
    case 0: {
      auto r = (*client)->Get("key", deadline);
      s = r.status();
      if (r.ok()) WEFT_FUZZ_CHECK(ok_frame && r.value() == payload);
      break;
    }
    case 1:
      s = (*client)->Set("key", "value", deadline);
      WEFT_FUZZ_CHECK(s.ok() == ok_frame);
      break;
    case 2: {
      auto r = (*client)->Add("key", 1, deadline);
      s = r.status();
      WEFT_FUZZ_CHECK(r.ok() == (ok_frame && payload.size() == 8));
      if (r.ok()) WEFT_FUZZ_CHECK(r.value() == GetI64(payload.data()));
      break;
    }
    case 3: {
      auto r = (*client)->Check("key", deadline);
      s = r.status();
      WEFT_FUZZ_CHECK(r.ok() == (ok_frame && payload.size() == 1));
      if (r.ok()) WEFT_FUZZ_CHECK(r.value() == (payload[0] != 0));
      break;
    }
  }
  if (op == 0) WEFT_FUZZ_CHECK(s.ok() == ok_frame);
  if (error_frame) {
    WEFT_FUZZ_CHECK(s.code() == Code::kInvalidArgument);
    WEFT_FUZZ_CHECK(s.message().find(payload) != std::string::npos);
  }
  WEFT_FUZZ_CHECK(s.code() != Code::kDeadlineExceeded);
  return 0;
}
