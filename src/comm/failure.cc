#include "comm/failure.h"

#include <fmt/format.h>

namespace weft::comm {

Status AbortCause(int rank) { return Aborted(fmt::format("rank {} called weftCommAbort", rank)); }

Status RefusedAfterFailure(int rank, const Call& call, const Status& cause) {
  return Aborted(fmt::format("rank {}: {} refused: the communicator failed earlier: {}", rank,
                             CallName(call), cause.ToString()));
}

Status AbortedCall(int rank, const Call& call) {
  return Aborted(fmt::format("rank {}: {} refused: the communicator was aborted (weftCommAbort)",
                             rank, CallName(call)));
}

void ErrorBoard::RecordFailure(const Status& cause) {
  MutexLock lock(&mu_);
  if (async_error_.ok()) async_error_ = cause;
}

Status ErrorBoard::AsyncError() {
  MutexLock lock(&mu_);
  return async_error_;
}

std::string ErrorBoard::LastError() {
  MutexLock lock(&mu_);
  return last_error_;
}

void ErrorBoard::SetLastError(const Status& status) {
  MutexLock lock(&mu_);
  last_error_ = prefix_ + status.ToString();
}

}  // namespace weft::comm
