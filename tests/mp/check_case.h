// One test case (a collective with its dtype, reduction, count, root, placement and
// completion mode) and its buffers on this rank: filling inputs, calling the public API,
// and checking every output element against check_values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "check_memory.h"
#include "weft/weft.h"

namespace check {

enum class Coll {
  kAllReduce,
  kReduce,
  kBroadcast,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kGather,
  kScatter,
  kBarrier,
  kSendRecv,
};
// kBlocking: weftX; kWait: weftIX then weftWait; kTest: weftIX then weftTest polling.
enum class Mode { kBlocking, kWait, kTest };

const std::vector<Coll>& AllColls();
const char* CollName(Coll c);
bool ParseColl(const std::string& s, Coll* out);
const char* ModeName(Mode m);
bool ParseMode(const std::string& s, Mode* out);
const char* OpName(weftRedOp_t op);
bool ParseOp(const std::string& s, weftRedOp_t* out);
bool IsReduction(Coll c);
bool IsRooted(Coll c);
// Whether weft.h defines an in-place form (alltoall, send/recv and barrier have none).
bool HasInPlace(Coll c);

struct Case {
  Coll coll = Coll::kAllReduce;
  weftDataType_t dtype = weftFloat32;
  weftRedOp_t op = weftSum;  // reductions only
  size_t count = 0;          // per rank, as the API's count argument
  int root = 0;              // rooted collectives only
  bool in_place = false;
  Mode mode = Mode::kBlocking;
  uint64_t salt = 0;  // distinct per case, equal on every rank
};

// "allreduce dtype=float16 op=sum count=7 root=- inplace mode=wait"
std::string Describe(const Case& c);

class CaseRun {
 public:
  // Buffers from `arena` when given (it must have room: BytesNeeded), else the heap.
  CaseRun(const Case& c, int rank, int nranks, SharedArena* arena = nullptr);
  CaseRun(CaseRun&&) = default;
  // What the case's buffers take from an arena.
  static size_t BytesNeeded(const Case& c, int nranks);
  // The larger of the case's two buffers, in bytes (the same on every rank).
  static size_t LargestBytes(const Case& c, int nranks);

  // Blocking mode: runs the collective. Other modes: issues it and keeps the request(s).
  // On failure returns the error and sets *error to a message with the API's details.
  weftResult_t Start(weftComm_t comm, std::string* error);
  // The outstanding requests (non-blocking modes), to complete with weftWait/weftTest.
  std::vector<weftRequest_t>& requests() { return requests_; }
  // Checks outputs (and that out-of-place inputs were left alone). Returns "" when all
  // is well, else one line naming the case, the rank and the first bad element.
  std::string Verify() const;
  // Overwrites one element of this rank's output with a value no case expects (NaN, or
  // the type's extreme). False when this rank has no output to spoil (a non-root of
  // reduce or gather, a barrier, a count of 0).
  bool SpoilOneOutput();
  const Case& spec() const { return c_; }

 private:
  void* SendPtr();
  void* RecvPtr();
  void FillInputs();
  size_t OutputElems() const;  // how many elements Verify checks at RecvPtr
  template <weftDataType_t T>
  std::string VerifyAs() const;  // Verify for dtype T

  Case c_;
  int rank_, nranks_;
  size_t send_elems_ = 0, recv_elems_ = 0;
  // 8-byte words so every dtype is naturally aligned: send_ and recv_ point into the
  // vectors or into the arena.
  std::vector<uint64_t> send_words_, recv_words_;
  uint64_t* send_ = nullptr;
  uint64_t* recv_ = nullptr;
  std::vector<weftRequest_t> requests_;
};

}  // namespace check
