#include "core/status.h"

#include <cstring>

namespace weft {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kInvalidUsage: return "InvalidUsage";
    case Code::kDeadlineExceeded: return "DeadlineExceeded";
    case Code::kUnavailable: return "Unavailable";
    case Code::kAborted: return "Aborted";
    case Code::kSystemError: return "SystemError";
    case Code::kProtocolError: return "ProtocolError";
    case Code::kInternal: return "Internal";
  }
  return "Unknown";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return message_ ? *message_ : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message();
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  return Status(code_, context + ": " + message());
}

Status ErrnoStatus(const std::string& what, int err) {
  char buf[256];
  // GNU strerror_r returns a char* that may or may not point into buf.
  const char* text = strerror_r(err, buf, sizeof(buf));
  return Status(Code::kSystemError, what + ": " + text);
}

}  // namespace weft
