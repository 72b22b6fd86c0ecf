// A thin C++ layer over weft.h: an owning Comm, typed calls, and errors as exceptions
// (weft::Error carries the result code and the detailed message). Header-only; the C
// API stays the stable ABI.
//
// Deliberately minimal: every blocking call, tagged sends and receives (blocking and
// non-blocking, and from any source), group calls (weft::group), and of the non-blocking
// collectives iallreduce (the one a training loop overlaps). For the other weftI* calls,
// the *Stream calls and the CUDA queries, call weft.h with Comm::get().
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "weft/weft.h"

namespace weft {

class Error : public std::runtime_error {
 public:
  Error(weftResult_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  weftResult_t code() const { return code_; }

 private:
  weftResult_t code_;
};

// The weft datatype of a C++ element type.
template <typename T> struct DataTypeOf;
template <> struct DataTypeOf<int8_t> { static constexpr weftDataType_t value = weftInt8; };
template <> struct DataTypeOf<uint8_t> { static constexpr weftDataType_t value = weftUint8; };
template <> struct DataTypeOf<int32_t> { static constexpr weftDataType_t value = weftInt32; };
template <> struct DataTypeOf<uint32_t> { static constexpr weftDataType_t value = weftUint32; };
template <> struct DataTypeOf<int64_t> { static constexpr weftDataType_t value = weftInt64; };
template <> struct DataTypeOf<uint64_t> { static constexpr weftDataType_t value = weftUint64; };
template <> struct DataTypeOf<float> { static constexpr weftDataType_t value = weftFloat32; };
template <> struct DataTypeOf<double> { static constexpr weftDataType_t value = weftFloat64; };

class Request {
 public:
  explicit Request(weftRequest_t r) : req_(r) {}
  Request(Request&& o) noexcept : req_(std::exchange(o.req_, nullptr)) {}
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  // An unwaited request is waited for, so its buffers are not freed under it.
  ~Request() {
    if (req_ != nullptr) weftWait(req_);
  }
  void wait() {
    weftResult_t r = weftWait(std::exchange(req_, nullptr));
    // The thread's last error: valid even if the communicator was aborted meanwhile.
    if (r != weftSuccess) throw Error(r, weftGetLastError(nullptr));
  }

 private:
  weftRequest_t req_;
};

class Comm {
 public:
  // Rank, size and rendezvous from the launcher's environment.
  static Comm FromEnv() {
    weftComm_t c = nullptr;
    weftResult_t r = weftCommInitFromEnv(&c);
    if (r != weftSuccess) throw Error(r, weftGetLastError(nullptr));
    return Comm(c);
  }
  static Comm FromUniqueId(int nranks, const weftUniqueId& id, int rank) {
    weftComm_t c = nullptr;
    weftResult_t r = weftCommInitRank(&c, nranks, id, rank);
    if (r != weftSuccess) throw Error(r, weftGetLastError(nullptr));
    return Comm(c);
  }
  static weftUniqueId NewUniqueId() {
    weftUniqueId id;
    weftResult_t r = weftGetUniqueId(&id);
    if (r != weftSuccess) throw Error(r, weftGetLastError(nullptr));
    return id;
  }

  explicit Comm(weftComm_t c) : comm_(c) {}
  Comm(Comm&& o) noexcept : comm_(std::exchange(o.comm_, nullptr)) {}
  Comm& operator=(Comm&& o) noexcept {
    std::swap(comm_, o.comm_);
    return *this;
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() {
    if (comm_ != nullptr) weftCommDestroy(comm_);
  }

  // weftCommAbort: abandons every call on this communicator (other threads' too) and
  // frees it; this Comm becomes empty. Never throws.
  void abort() noexcept {
    weftComm_t c = std::exchange(comm_, nullptr);
    if (c != nullptr) weftCommAbort(c);
  }

  weftComm_t get() const { return comm_; }
  int rank() const {
    int r = 0;
    check(weftCommUserRank(comm_, &r));
    return r;
  }
  int size() const {
    int n = 0;
    check(weftCommCount(comm_, &n));
    return n;
  }
  // weftCommGetLastAlgorithm: what the planner ran for this rank's last collective.
  std::string last_algorithm() const {
    const char* name = "";
    check(weftCommGetLastAlgorithm(comm_, &name));
    return name;
  }
  // A communicator of the ranks with the same color; an empty Comm for WEFT_SPLIT_NOCOLOR.
  Comm split(int color, int key) const {
    weftComm_t c = nullptr;
    check(weftCommSplit(comm_, color, key, &c));
    return Comm(c);
  }

  // weftCommShrink: a communicator of the ranks that remain (old order kept). An empty
  // `exclude` leaves out the ranks found lost (docs/RELIABILITY.md).
  Comm shrink(const std::vector<int>& exclude = {}, int flags = WEFT_SHRINK_DEFAULT) const {
    weftComm_t c = nullptr;
    check(weftCommShrink(comm_, exclude.data(), static_cast<int>(exclude.size()), &c, flags));
    return Comm(c);
  }

  template <typename T>
  void allreduce(const T* send, T* recv, size_t count, weftRedOp_t op = weftSum) const {
    check(weftAllReduce(send, recv, count, DataTypeOf<T>::value, op, comm_));
  }
  template <typename T>
  Request iallreduce(const T* send, T* recv, size_t count, weftRedOp_t op = weftSum) const {
    weftRequest_t req = nullptr;
    check(weftIAllReduce(send, recv, count, DataTypeOf<T>::value, op, comm_, &req));
    return Request(req);
  }
  template <typename T>
  void reduce(const T* send, T* recv, size_t count, int root, weftRedOp_t op = weftSum) const {
    check(weftReduce(send, recv, count, DataTypeOf<T>::value, op, root, comm_));
  }
  template <typename T>
  void broadcast(const T* send, T* recv, size_t count, int root) const {
    check(weftBroadcast(send, recv, count, DataTypeOf<T>::value, root, comm_));
  }
  template <typename T>
  void allgather(const T* send, T* recv, size_t sendcount) const {
    check(weftAllGather(send, recv, sendcount, DataTypeOf<T>::value, comm_));
  }
  template <typename T>
  void reducescatter(const T* send, T* recv, size_t recvcount, weftRedOp_t op = weftSum) const {
    check(weftReduceScatter(send, recv, recvcount, DataTypeOf<T>::value, op, comm_));
  }
  template <typename T>
  void alltoall(const T* send, T* recv, size_t count) const {
    check(weftAllToAll(send, recv, count, DataTypeOf<T>::value, comm_));
  }
  template <typename T>
  void gather(const T* send, T* recv, size_t sendcount, int root) const {
    check(weftGather(send, recv, sendcount, DataTypeOf<T>::value, root, comm_));
  }
  template <typename T>
  void scatter(const T* send, T* recv, size_t recvcount, int root) const {
    check(weftScatter(send, recv, recvcount, DataTypeOf<T>::value, root, comm_));
  }
  // A pair's messages are taken in the order sent; a receive names the tag of the next
  // one (weftSendTagged), or fails with weftInvalidUsage naming both.
  template <typename T>
  void send(const T* buf, size_t count, int peer, int tag = 0) const {
    check(weftSendTagged(buf, count, DataTypeOf<T>::value, peer, tag, comm_));
  }
  template <typename T>
  void recv(T* buf, size_t count, int peer, int tag = 0) const {
    check(weftRecvTagged(buf, count, DataTypeOf<T>::value, peer, tag, comm_));
  }
  template <typename T>
  Request isend(const T* buf, size_t count, int peer, int tag = 0) const {
    weftRequest_t req = nullptr;
    check(weftISendTagged(buf, count, DataTypeOf<T>::value, peer, tag, comm_, &req));
    return Request(req);
  }
  template <typename T>
  Request irecv(T* buf, size_t count, int peer, int tag = 0) const {
    weftRequest_t req = nullptr;
    check(weftIRecvTagged(buf, count, DataTypeOf<T>::value, peer, tag, comm_, &req));
    return Request(req);
  }
  // weftRecvAny: from whichever peer's next message arrives first; returns that peer.
  template <typename T>
  int recv_any(T* buf, size_t count, int tag = 0) const {
    int source = -1;
    check(weftRecvAny(buf, count, DataTypeOf<T>::value, tag, &source, comm_));
    return source;
  }
  void barrier() const { check(weftBarrier(comm_)); }

 private:
  void check(weftResult_t r) const {
    if (r != weftSuccess) throw Error(r, weftGetLastError(comm_));
  }
  weftComm_t comm_;
};

// Runs `body` between weftGroupStart and weftGroupEnd: the blocking calls it makes (on
// any Comm) are issued together at the end, so sends may come before receives on every
// rank. Throws the group's first failure once all its calls are done; if `body` throws,
// the group is ended (its calls waited for) and the exception passes on.
template <typename Body>
void group(Body&& body) {
  weftResult_t r = weftGroupStart();
  if (r != weftSuccess) throw Error(r, weftGetLastError(nullptr));
  try {
    body();
  } catch (...) {
    (void)weftGroupEnd();
    throw;
  }
  r = weftGroupEnd();
  if (r != weftSuccess) throw Error(r, weftGetLastError(nullptr));
}

}  // namespace weft
