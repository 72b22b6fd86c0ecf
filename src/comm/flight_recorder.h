// The flight recorder: each communicator keeps its last operations (sequence number, op,
// size, dtype, algorithm, where a running one is and whom it waits for, timestamps,
// outcome) and writes them as JSON to WEFT_FLIGHT_RECORDER_DIR when a call fails or times
// out, and, for every live communicator of the process, on SIGUSR1. `weft-doctor DIR`
// reads every rank's dump and says who is behind, missing, or waiting for whom
// (docs/RELIABILITY.md).
//
// Cost: two uncontended mutex sections and a few stores per call, no allocation; nothing
// is written unless the directory is set.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "exec/progress.h"

namespace weft::comm {

// Where a SIGUSR1 dump goes: WEFT_FLIGHT_RECORDER_DIR, else (created, mode 0700)
// ${TMPDIR:-/tmp}/weft-flight-recorder-<uid>. Failures and timeouts dump only when
// WEFT_FLIGHT_RECORDER_DIR is set; a signal is an explicit request, so it always dumps.
std::string SignalDumpDir();

class FlightRecorder {
 public:
  // WEFT_FLIGHT_RECORDER_ENTRIES (default 64) entries are kept. `name`: the
  // communicator's (weftConfig_t), "" for none; dumps carry it as "name".
  FlightRecorder(uint64_t comm_id, int rank, int size, std::string name = "");
  // WEFT_FLIGHT_RECORDER_ENTRIES (1 to 100000, default 64); checked at communicator init.
  static Result<long long> EntriesFromEnv();
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // A call starts; the executor publishes its position through the returned Progress,
  // valid until End. The names are kept as pointers, not copied: they must be string
  // literals or otherwise outlive the recorder, as CallName, DataTypeName and the
  // algorithm registry's names do.
  //
  // Begin, SetAlgo and End take no lock. Calls are serialised by their communicator, so
  // there is one writer at a time; the dump, which may run on another thread while a
  // call hangs, reads each entry as a seqlock reader (retrying while the writer is
  // inside it). A small call costs a few hundred nanoseconds, and the two mutex sections
  // and three string copies this replaced were a quarter of it.
  exec::Progress* Begin(uint64_t seq, const char* op, uint64_t bytes, const char* dtype);
  void End(const Status& status);
  // The algorithm of the running call, once the planner has chosen it (same lifetime
  // rule as Begin's names).
  void SetAlgo(const char* algo);

  // The dump as JSON (format: docs/RELIABILITY.md).
  std::string ToJson(std::string_view reason) const;
  // Writes <dir>/weft-fr-<comm>-r<rank>.json when WEFT_FLIGHT_RECORDER_DIR is set
  // (replacing an older dump of the same rank); a no-op otherwise.
  void DumpIfEnabled(std::string_view reason) const;
  // Writes the dump into `dir` whatever WEFT_FLIGHT_RECORDER_DIR says (SIGUSR1's dumps).
  void DumpTo(const std::string& dir, std::string_view reason) const;

 private:
  // Every field is written by the one writer between two increments of `version` (odd
  // while it writes) and read by the dump only when `version` was even and unchanged
  // across the read. Relaxed atomics, so a torn read is a retry, never undefined.
  struct Entry {
    std::atomic<uint32_t> version{0};
    std::atomic<uint64_t> seq{0}, bytes{0};
    std::atomic<const char*> op{""}, dtype{""}, algo{""};
    // Wall clock (comparable across hosts with NTP), at the kernel tick's resolution (1-4
    // ms) except a failed call's end, which is exact (CoarseNowNs in the .cc).
    std::atomic<int64_t> start_ns{0}, end_ns{0};
    std::atomic<bool> running{false}, failed{false};
    std::string status;  // guarded by mu_; meaningful while `failed`
    exec::Progress progress;
  };
  struct Snapshot;
  // False when no consistent read came within a bound (the entry is then left out of the
  // dump, which counts it as "unsettled").
  static bool Read(const Entry& e, Snapshot* s);

  const uint64_t comm_id_;
  const std::string name_;
  const int rank_, size_;
  mutable Mutex mu_;  // a failed call's status text; one dump at a time
  std::vector<std::unique_ptr<Entry>> ring_;
  std::atomic<size_t> next_{0};  // entries ever begun
  Entry* current_ = nullptr;     // the writer's only
};

// Escapes `s` for a JSON string (quotes, backslashes, control characters).
std::string JsonEscape(std::string_view s);

}  // namespace weft::comm
