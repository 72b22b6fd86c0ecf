// Copies one rank's output stream to weftrun's stdout or stderr, line by line, with
// "[R] " in front of each line. Each complete line goes out in a single write(2), so
// lines from different ranks never interleave mid-line. Not thread-safe (weftrun's
// supervisor loop is single-threaded).
#pragma once

#include <cstddef>
#include <string>

namespace weftrun {

class LinePrefixer {
 public:
  // `out_fd` is not owned. An empty prefix passes bytes through unchanged.
  LinePrefixer(int out_fd, std::string prefix) : out_fd_(out_fd), prefix_(std::move(prefix)) {}

  // Writes every complete line in `data`; keeps a trailing partial line for later.
  void Feed(const char* data, size_t n);
  // Writes a held partial line (with a newline added, so the next rank's output
  // starts on its own line). Called at EOF.
  void Flush();

 private:
  void Emit(const char* line, size_t n, bool add_newline);

  int out_fd_;
  std::string prefix_;
  std::string partial_;
};

// write(2) of all `n` bytes, retrying EINTR and short writes. Output errors (a closed
// pipe) are ignored: losing output must not stop supervision of the ranks.
void WriteAll(int fd, const char* data, size_t n);

}  // namespace weftrun
