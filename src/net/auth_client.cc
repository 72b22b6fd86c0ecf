// The blocking client side of the handshake (auth.h), for sides that connect.
#include <fmt/format.h>

#include "net/auth.h"
#include "net/socket.h"

namespace weft::net {
namespace {

// Reads one whole frame: the head first, then the body its length announces.
Result<AuthFrame> ReadFrame(int fd, std::string* buf, const Deadline& deadline) {
  buf->assign(kAuthHeadBytes, '\0');
  WEFT_RETURN_IF_ERROR(ReadFull(fd, buf->data(), buf->size(), deadline));
  WEFT_ASSIGN_OR_RETURN(AuthFrame head, ParseAuthFrame(*buf));
  (void)head;
  size_t body = static_cast<uint8_t>((*buf)[6]) | (size_t(static_cast<uint8_t>((*buf)[7])) << 8);
  buf->resize(kAuthHeadBytes + body);
  WEFT_RETURN_IF_ERROR(ReadFull(fd, buf->data() + kAuthHeadBytes, body, deadline));
  return ParseAuthFrame(*buf);
}

}  // namespace

Status Authenticate(int fd, const AuthKey& key, AuthRole role, int32_t rank, uint64_t context,
                    const std::string& peer, const Deadline& deadline) {
  auto run = [&]() -> Status {
    AuthClient client(key, role, rank, context);
    WEFT_ASSIGN_OR_RETURN(std::string hello, client.Hello());
    WEFT_RETURN_IF_ERROR(WriteFull(fd, hello.data(), hello.size(), deadline));
    std::string buf;
    WEFT_ASSIGN_OR_RETURN(AuthFrame challenge, ReadFrame(fd, &buf, deadline));
    WEFT_ASSIGN_OR_RETURN(std::string proof, client.Answer(challenge));
    WEFT_RETURN_IF_ERROR(WriteFull(fd, proof.data(), proof.size(), deadline));
    WEFT_ASSIGN_OR_RETURN(AuthFrame verdict, ReadFrame(fd, &buf, deadline));
    return client.Verdict(verdict);
  };
  Status s = run();
  if (s.ok()) return s;
  return s.WithContext(fmt::format("authenticating the {} connection to {}", AuthRoleName(role),
                                   peer));
}

}  // namespace weft::net
