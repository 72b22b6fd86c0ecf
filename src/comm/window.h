// One-sided windows on one host (weftWinCreate and friends; torch's new_window).
//
// Every rank exposes a range of a weftMemAlloc buffer. Creation maps every peer's range
// (the memfd taken with pidfd_getfd: transport/shm/shared_buffer.h) and a small signal
// block per rank, so a put is a memcpy into the peer's memory and a signal an atomic
// increment of a counter in the peer's block:
//
//   block of rank t:  word[f] (one per 64-byte line) = signals rank f has sent to t
//
// A put followed by a signal to the same peer is seen in that order: the signal's
// increment is a release, the waiter's load an acquire. A waiter spins, then yields, then
// sleeps on the word (a futex on shared memory; exec/backoff.h's phases), and checks,
// every so often and between sleeps, its deadline and whether the
// signaller's process has exited (a pidfd taken at creation: no pid reuse, and a dead
// process its parent has not reaped yet counts as gone).
//
// Creation is collective and all-or-nothing: every rank's card (its range, its fds, its
// host, or why it has none) goes to every rank through the communicator, and a second
// exchange says whether each could map the others. Any failure fails every rank with the
// same message naming the rank and the cause, so no rank holds a window its peers lack.
// Ranks on different hosts (host ids differ: transport/mesh.h) are refused.
//
// Thread-safety: Put and Signal may be called from any thread; WaitSignal for one peer
// from one thread at a time (it counts the signals it has consumed).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/status.h"
#include "transport/shm/shared_buffer.h"

namespace weft::comm {

class Window {
 public:
  // Gathers `bytes` from every rank into `all` (rank r's at r * bytes): the communicator's
  // all-gather, passed in so that this file needs no C API.
  using AllGather = std::function<Status(const void* mine, void* all, size_t bytes)>;

  // Collective. `buff`/`bytes`: this rank's range, inside one weftMemAlloc allocation
  // (bytes 0: none, any buff).
  // `timeout_s`: WaitSignal's default (the communicator's timeout at creation).
  static Result<std::unique_ptr<Window>> Create(int rank, int size, void* buff, size_t bytes,
                                                double timeout_s, const AllGather& allgather);
  ~Window();

  // Where rank `peer`'s range is mapped in this process, and its length.
  Status Peer(int peer, void** base, size_t* bytes) const;
  // Copies `bytes` from `src` to `offset` in rank `peer`'s range (this rank's own too).
  Status Put(const void* src, size_t bytes, int peer, size_t offset) const;
  // Tells `peer` that this rank's puts before it are done.
  Status Signal(int peer);
  // Waits until `peer` has signalled this rank once more than the waits before consumed,
  // at most `timeout_s` seconds; Unavailable if the peer's process is gone.
  Status WaitSignal(int peer, double timeout_s);
  double timeout_s() const { return timeout_s_; }

 private:
  struct PeerView {
    char* base = nullptr;
    size_t bytes = 0;
    std::atomic<uint32_t>* signals = nullptr;  // the peer's block
    pid_t pid = 0;
    int pidfd = -1;  // readable once the peer's process has exited (even unreaped)
  };
  bool PeerGone(int peer) const;
  Window(int rank, int size, double timeout_s)
      : rank_(rank), size_(size), timeout_s_(timeout_s), views_(size), consumed_(size, 0) {}
  Status CheckPeer(int peer, const char* api) const;
  std::atomic<uint32_t>* Word(std::atomic<uint32_t>* block, int from) const;

  const int rank_, size_;
  const double timeout_s_;
  bool oversubscribed_ = false;  // more ranks than CPUs: WaitSignal spins less
  void* own_signals_ = nullptr;  // this rank's block (SharedAlloc)
  std::vector<PeerView> views_;
  std::vector<transport::shm::PeerMapping> mappings_;
  std::vector<uint32_t> consumed_;  // signals taken from each peer
};

}  // namespace weft::comm
