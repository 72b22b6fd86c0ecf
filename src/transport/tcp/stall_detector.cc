#include "transport/tcp/stall_detector.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace weft::transport::tcp {

bool PeerStoppedAcknowledging(const AckState& s, uint32_t budget_ms) {
  if (budget_ms == 0 || s.ms_since_last_ack <= budget_ms) return false;
  return s.unacked_segments > 0 || s.unanswered_probes >= 2;
}

std::string StallDetector::Check(int fd) {
  if (budget_ms_ == 0 || (++idle_calls_ & 255) != 0) return {};
  auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return {};
  next_check_ = now + std::chrono::milliseconds(500);
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return {};  // not TCP
  AckState s{info.tcpi_last_ack_recv, info.tcpi_unacked, info.tcpi_probes};
  if (!PeerStoppedAcknowledging(s, budget_ms_)) return {};
  return fmt::format(
      "no acknowledgement for {:.1f} s with {} segment(s) unacknowledged and {} "
      "zero-window probe(s) unanswered: the peer's host is unreachable or gone "
      "(bound: WEFT_TCP_KEEPALIVE={} s)",
      s.ms_since_last_ack / 1000.0, s.unacked_segments, s.unanswered_probes,
      budget_ms_ / 1000);
}

}  // namespace weft::transport::tcp
