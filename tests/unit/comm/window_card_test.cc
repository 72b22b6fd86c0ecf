// Window::Create against peers' cards that do not add up: refused before anything in them
// is mapped or written through (the window's exchange is the all-gather of comm/window.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "comm/window.h"
#include "transport/shm/shared_buffer.h"

namespace weft::comm {
namespace {

// Two ranks: this one (rank 0) and a peer whose card `spoil` rewrites from a copy of ours.
Status CreateWithPeerCard(const std::function<void(uint8_t* card, size_t bytes)>& spoil) {
  auto buf = transport::shm::SharedAlloc(4096);
  EXPECT_TRUE(buf.ok());
  bool first = true;
  auto allgather = [&](const void* mine, void* all, size_t bytes) -> Status {
    auto* out = static_cast<uint8_t*>(all);
    std::memcpy(out, mine, bytes);
    if (first) {  // the cards; the second exchange (mapped or not) goes through untouched
      std::memcpy(out + bytes, mine, bytes);
      spoil(out + bytes, bytes);
      first = false;
    } else {
      std::memcpy(out + bytes, mine, bytes);
    }
    return Status::Ok();
  };
  auto w = Window::Create(0, 2, buf.value(), 4096, 5.0, allgather);
  EXPECT_TRUE(transport::shm::SharedFree(buf.value()).ok());
  return w.ok() ? Status::Ok() : w.status();
}

TEST(WindowCardTest, AnIntactCardIsAccepted) {
  EXPECT_TRUE(CreateWithPeerCard([](uint8_t*, size_t) {}).ok());
}

TEST(WindowCardTest, ACardWithoutTheMagicIsGarbled) {
  Status st = CreateWithPeerCard([](uint8_t* card, size_t) { card[0] ^= 0xff; });
  EXPECT_EQ(st.code(), Code::kProtocolError);
  EXPECT_NE(st.message().find("rank 1's card is garbled"), std::string::npos) << st.ToString();
}

TEST(WindowCardTest, SizesThatDoNotAddUpAreRefused) {
  // pid, fds and sizes (the fields after the magic) all 0xff; host and error kept.
  Status st = CreateWithPeerCard([](uint8_t* card, size_t) {
    std::memset(card + 4, 0xff, 4 * 3 + 8 * 4);  // pid, fds, sizes; host and error kept
  });
  EXPECT_EQ(st.code(), Code::kProtocolError);
  EXPECT_NE(st.message().find("rank 1's card does not add up"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace weft::comm
