// Notices a tcp peer whose host vanished while our data to it is unacknowledged.
//
// TCP keep-alive (tcp_setup.h) covers an idle connection only: the kernel sends no
// keep-alive probe while data is in flight, and retransmits that data for ~15 minutes
// (tcp_retries2) before failing the socket. TCP_USER_TIMEOUT would bound this, but it
// also ends connections to a live peer that merely does not read for a while (a zero
// receive window held longer than the timeout aborts the connection, Linux >= 5.11), which
// a rank deep in a compute phase legitimately does.
//
// So the link asks the kernel (TCP_INFO) while it waits: the peer is declared gone when
// nothing has been acknowledged for the budget although we have unacknowledged bytes in
// flight, or although two or more zero-window probes went unanswered. A live peer that
// does not read answers every probe (and its answers reset the kernel's unanswered-probe
// count), so it is never hit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace weft::transport::tcp {

// What the kernel reports for a connection, as far as the verdict needs it.
struct AckState {
  uint32_t ms_since_last_ack = 0;  // tcpi_last_ack_recv
  uint32_t unacked_segments = 0;   // tcpi_unacked
  uint32_t unanswered_probes = 0;  // tcpi_probes (zero-window probes)
};

// The verdict, pure for tests: true when the peer must be declared gone.
bool PeerStoppedAcknowledging(const AckState& s, uint32_t budget_ms);

class StallDetector {
 public:
  // `budget_s`: WEFT_TCP_KEEPALIVE (0 turns detection off, as it turns keep-alive off).
  explicit StallDetector(int budget_s) : budget_ms_(static_cast<uint32_t>(budget_s) * 1000u) {}

  // Called after a Progress pass that moved nothing while ops were pending. Cheap: it
  // reads the clock every 256th call and asks the kernel at most every 500 ms. Returns
  // a description of the stall ("no acknowledgement for 4.2 s with 12 segments
  // unacknowledged") when the peer is gone, an empty string otherwise.
  std::string Check(int fd);
  // Called when bytes moved.
  void Moved() { idle_calls_ = 0; }

 private:
  uint32_t budget_ms_;
  uint32_t idle_calls_ = 0;
  std::chrono::steady_clock::time_point next_check_{};
};

}  // namespace weft::transport::tcp
