// Where a running call is, published by the executor for the flight recorder
// (comm/flight_recorder.h): the round it is in and a peer it still waits for. Written by
// the thread running the call, read by whoever dumps; relaxed atomics, updated only when
// the executor checks its deadline, so it costs nothing on the fast path.
#pragma once

#include <atomic>
#include <cstdint>

namespace weft::exec {

struct Progress {
  std::atomic<int32_t> round{-1};
  std::atomic<int32_t> waiting_for{-1};  // a peer rank, or -1
};

}  // namespace weft::exec
