// The flight recorder: each communicator keeps its last operations (sequence number, op,
// size, dtype, algorithm, where a running one is and whom it waits for, timestamps,
// outcome) and writes them as JSON to WEFT_FLIGHT_RECORDER_DIR when a call fails or times
// out, and, for every live communicator of the process, on SIGUSR1. `weft-doctor DIR`
// reads every rank's dump and says who is behind, missing, or waiting for whom
// (docs/RELIABILITY.md).
//
// Cost: a mutex and a few stores per call; nothing is written unless the directory is set.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "exec/progress.h"

namespace weft::comm {

class FlightRecorder {
 public:
  // WEFT_FLIGHT_RECORDER_ENTRIES (default 64) entries are kept.
  FlightRecorder(uint64_t comm_id, int rank, int size);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // A call starts; the executor publishes its position through the returned Progress,
  // valid until End.
  exec::Progress* Begin(uint64_t seq, std::string_view op, uint64_t bytes,
                        std::string_view dtype, std::string_view algo);
  void End(const Status& status);
  // The algorithm of the running call, once the planner has chosen it.
  void SetAlgo(std::string_view algo);

  // The dump as JSON (format: docs/RELIABILITY.md).
  std::string ToJson(std::string_view reason) const;
  // Writes <dir>/weft-fr-<comm>-r<rank>.json when WEFT_FLIGHT_RECORDER_DIR is set
  // (replacing an older dump of the same rank); a no-op otherwise.
  void DumpIfEnabled(std::string_view reason) const;

 private:
  struct Entry {
    uint64_t seq = 0;
    std::string op, dtype, algo, status;
    uint64_t bytes = 0;
    // Wall clock (comparable across hosts with NTP), at the kernel tick's resolution (1-4
    // ms) except a failed call's end, which is exact (CoarseNowNs in the .cc).
    int64_t start_ns = 0, end_ns = 0;
    bool running = false, failed = false;
    exec::Progress progress;
  };

  const uint64_t comm_id_;
  const int rank_, size_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> ring_;
  size_t next_ = 0;
  Entry* current_ = nullptr;
};

// Escapes `s` for a JSON string (quotes, backslashes, control characters).
std::string JsonEscape(std::string_view s);

}  // namespace weft::comm
