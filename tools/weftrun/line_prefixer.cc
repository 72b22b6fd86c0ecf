#include "line_prefixer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weftrun {

void WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

void LinePrefixer::Feed(const char* data, size_t n) {
  if (prefix_.empty()) {  // --no-prefix: no need to find line boundaries
    WriteAll(out_fd_, data, n);
    return;
  }
  while (n > 0) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', n));
    if (nl == nullptr) {
      partial_.append(data, n);
      return;
    }
    size_t len = static_cast<size_t>(nl - data) + 1;
    if (partial_.empty()) {
      Emit(data, len, false);
    } else {
      partial_.append(data, len);
      Emit(partial_.data(), partial_.size(), false);
      partial_.clear();
    }
    data += len;
    n -= len;
  }
}

void LinePrefixer::Flush() {
  if (partial_.empty()) return;
  Emit(partial_.data(), partial_.size(), true);
  partial_.clear();
}

void LinePrefixer::Emit(const char* line, size_t n, bool add_newline) {
  std::string out;
  out.reserve(prefix_.size() + n + 1);
  out.append(prefix_).append(line, n);
  if (add_newline) out.push_back('\n');
  WriteAll(out_fd_, out.data(), out.size());
}

}  // namespace weftrun
