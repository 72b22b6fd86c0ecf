// How a communicator fails, and what it says afterwards.
//
// After a transport error, a timeout or a mismatch found mid-call the communicator is
// failed: the links may hold half a message, so every later call is refused with the
// original cause (RefusedAfterFailure). weftCommAbort fails it with AbortCause. The
// failure itself lives with the executing state (Communicator::failure_, under the
// execution lock, read on every call); ErrorBoard keeps the copies that any thread may
// read: weftCommGetAsyncError's and weftGetLastError's.
#pragma once

#include <string>

#include "comm/call.h"
#include "core/mutex.h"
#include "core/status.h"

namespace weft::comm {

// Whether `st` leaves the links in doubt. A bad argument is refused before any data
// moves, so the communicator stays usable.
inline bool IsFatal(const Status& st) {
  return st.code() != Code::kInvalidArgument && st.code() != Code::kOk;
}

// Aborted: "rank R called weftCommAbort".
Status AbortCause(int rank);
// Aborted: `call` is refused because the communicator failed earlier with `cause`.
Status RefusedAfterFailure(int rank, const Call& call, const Status& cause);
// Aborted: `call` is refused because the communicator was aborted.
Status AbortedCall(int rank, const Call& call);

// Thread-safe.
class ErrorBoard {
 public:
  // `name`: the communicator's (weftConfig_t), "" for none. A named communicator's
  // messages begin with it, so that a program with several can tell whose error it is.
  explicit ErrorBoard(std::string name = "") : prefix_(PrefixFor(name)) {}

  // Keeps the first fatal error for AsyncError.
  void RecordFailure(const Status& cause) EXCLUDES(mu_);
  // The first fatal error (ok while the communicator is healthy).
  Status AsyncError() EXCLUDES(mu_);
  // The last error message reported to the user ("" if none).
  std::string LastError() EXCLUDES(mu_);
  void SetLastError(const Status& status) EXCLUDES(mu_);

 private:
  static std::string PrefixFor(const std::string& name) {
    return name.empty() ? "" : "communicator \"" + name + "\": ";
  }

  const std::string prefix_;
  Mutex mu_;
  Status async_error_ GUARDED_BY(mu_);
  std::string last_error_ GUARDED_BY(mu_);
};

}  // namespace weft::comm
