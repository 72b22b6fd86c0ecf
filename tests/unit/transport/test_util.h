// Helpers for transport tests: ranks as threads in one process, a card exchange through
// shared memory, and a progress loop like the executor's.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "transport/link.h"
#include "transport/mesh.h"

namespace weft::transport::testing {

// A comm_id no other test (or concurrent test binary) uses.
inline uint64_t UniqueCommId() {
  static std::atomic<uint64_t> counter{1};
  return (static_cast<uint64_t>(getpid()) << 24) ^ (counter++ * 0x9e3779b97f4a7c15ull >> 8);
}

// An AllGatherFn for N threads of one process: each deposits its string and waits (until
// its deadline) for all N; supports repeated rounds.
class ThreadAllGather {
 public:
  explicit ThreadAllGather(int n) : n_(n), slots_(n) {}

  AllGatherFn For(int rank, Deadline deadline) {
    return [this, rank, deadline](const std::string& mine) -> Result<std::vector<std::string>> {
      std::unique_lock<std::mutex> lock(mu_);
      int gen = generation_;
      slots_[rank] = mine;
      if (++arrived_ == n_) {
        results_[gen] = slots_;
        arrived_ = 0;
        ++generation_;
        cv_.notify_all();
      } else if (!cv_.wait_until(lock, deadline.at(), [&] { return generation_ > gen; })) {
        return DeadlineExceeded("rank " + std::to_string(rank) + ": test allgather timed out");
      }
      return results_[gen];
    };
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_;
  std::vector<std::string> slots_;
  int arrived_ = 0;
  int generation_ = 0;
  std::map<int, std::vector<std::string>> results_;
};

// Calls Progress on every busy link until none is busy, like the executor: yields when
// nothing moved. Returns the first link error, or DeadlineExceeded.
inline Status Pump(const std::vector<Link*>& links, Deadline deadline) {
  while (true) {
    bool busy = false;
    bool moved = false;
    for (Link* l : links) {
      if (l == nullptr || !l->Busy()) continue;
      Result<bool> r = l->Progress();
      if (!r.ok()) return r.status();
      moved = moved || r.value();
      busy = busy || l->Busy();
    }
    if (!busy) return Status::Ok();
    if (deadline.expired()) return DeadlineExceeded("Pump: ops still pending at the deadline");
    if (!moved) sched_yield();
  }
}

// Runs fn(rank) on `n` threads and joins them.
inline void RunRanks(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

// Builds a mesh of n thread-ranks; returns them indexed by rank (failing the test if any
// rank fails).
inline std::vector<std::unique_ptr<Mesh>> BuildMeshes(int n, TransportMode mode, uint64_t comm) {
  ThreadAllGather gather(n);
  std::vector<std::unique_ptr<Mesh>> meshes(n);
  std::vector<Status> errors(n);
  RunRanks(n, [&](int r) {
    MeshOptions o;
    o.rank = r;
    o.size = n;
    o.comm_id = comm;
    o.mode = mode;
    o.deadline = Deadline::AfterSeconds(20);
    auto m = Mesh::Connect(o, gather.For(r, o.deadline));
    if (m.ok()) {
      meshes[r] = std::move(m).value();
    } else {
      errors[r] = m.status();
    }
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errors[r].ok()) << errors[r].ToString();
  return meshes;
}

inline WireHeader Header(uint16_t kind, uint64_t seq, uint32_t step, uint64_t bytes,
                         uint32_t dtype_op = PackDtypeOp(8, 0)) {
  WireHeader h;
  h.kind = kind;
  h.seq = seq;
  h.step = step;
  h.dtype_op = dtype_op;
  h.bytes = bytes;
  return h;
}

// Deterministic bytes for the message src -> dst of a given size.
inline uint8_t PatternByte(int src, int dst, size_t size, size_t i) {
  return static_cast<uint8_t>(src * 131 + dst * 31 + size * 7 + i * 13 + (i >> 12));
}

inline std::vector<uint8_t> Pattern(int src, int dst, size_t size) {
  std::vector<uint8_t> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = PatternByte(src, dst, size, i);
  return v;
}

// Every rank sends every other rank a `size`-byte message (Pattern) over its mesh and
// receives one from each, all at once; checks every byte and every completion.
inline void ExpectAllPairsExchange(const std::vector<std::unique_ptr<Mesh>>& meshes, size_t size) {
  const int n = static_cast<int>(meshes.size());
  std::vector<Status> errors(n);
  std::vector<int> bad(n, 0);
  RunRanks(n, [&](int r) {
    std::vector<std::vector<uint8_t>> out(n), in(n);
    std::vector<SendOp> sends(n);
    std::vector<RecvOp> recvs(n);
    std::vector<Link*> links;
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      Link* l = meshes[r]->link(p);
      out[p] = Pattern(r, p, size);
      in[p].assign(size, 0);
      sends[p] = SendOp{Header(5, 1, 0, size), out[p].data()};
      recvs[p] = RecvOp{Header(5, 1, 0, size), in[p].data()};
      l->PostSend(&sends[p]);
      l->PostRecv(&recvs[p]);
      links.push_back(l);
    }
    errors[r] = Pump(links, Deadline::AfterSeconds(20));
    for (int p = 0; p < n; ++p)
      if (p != r && (in[p] != Pattern(p, r, size) || !recvs[p].done || !sends[p].done)) ++bad[r];
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(errors[r].ok()) << "size " << size << ": " << errors[r].ToString();
    EXPECT_EQ(bad[r], 0) << "rank " << r << " size " << size;
  }
}

// Message i of each size in `sizes`, both ways between end a (rank 0) and end b (rank 1):
// what each end sends (Pattern), where each receives, and the ops (header
// Header(3, 9, i, size)), ready to post. The ops point into the buffers: not copyable.
struct TwoWayMessages {
  explicit TwoWayMessages(const std::vector<size_t>& sizes)
      : sa(sizes.size()), sb(sizes.size()), ra(sizes.size()), rb(sizes.size()) {
    for (size_t size : sizes) {
      out_a.push_back(Pattern(0, 1, size));
      out_b.push_back(Pattern(1, 0, size));
      in_a.emplace_back(size);
      in_b.emplace_back(size);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      WireHeader h = Header(3, 9, static_cast<uint32_t>(i), sizes[i]);
      sa[i] = SendOp{h, out_a[i].data()};
      sb[i] = SendOp{h, out_b[i].data()};
      ra[i] = RecvOp{h, in_a[i].data()};
      rb[i] = RecvOp{h, in_b[i].data()};
    }
  }
  TwoWayMessages(const TwoWayMessages&) = delete;
  TwoWayMessages& operator=(const TwoWayMessages&) = delete;

  size_t size() const { return sa.size(); }
  // Every op of message i is done.
  bool Done(size_t i) const { return sa[i].done && sb[i].done && ra[i].done && rb[i].done; }

  std::vector<std::vector<uint8_t>> out_a, out_b, in_a, in_b;
  std::vector<SendOp> sa, sb;
  std::vector<RecvOp> ra, rb;
};

}  // namespace weft::transport::testing
