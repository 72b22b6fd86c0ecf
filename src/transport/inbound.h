// The receiving side of a byte-stream link (tcp, shm): the posted receives, and where the
// link stands in the message it is reading. Both read a message's header alone, and check
// it, before any payload byte lands in the user's buffer.
#pragma once

#include <cstdint>
#include <deque>

#include "transport/link.h"
#include "transport/wire.h"

namespace weft::transport {

struct Inbound {
  std::deque<RecvOp*> recvs;  // posted, in the order the peer sends
  WireHeader header;          // the message being read
  uint64_t header_off = 0;    // bytes of `header` read so far
  uint64_t payload_off = 0;   // payload bytes of the front recv read so far

  // The front receive has all its bytes: it is done, and what comes next is a header.
  void CompleteFront() {
    recvs.front()->done = true;
    recvs.pop_front();
    header_off = 0;
    payload_off = 0;
  }
};

}  // namespace weft::transport
