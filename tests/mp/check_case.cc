#include "check_case.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "check_dtypes.h"
#include "check_values.h"

namespace check {
namespace {

struct CollInfo {
  Coll coll;
  const char* name;
  bool reduction, rooted, in_place;
};
const CollInfo kColls[] = {
    {Coll::kAllReduce, "allreduce", true, false, true},
    {Coll::kReduce, "reduce", true, true, true},
    {Coll::kBroadcast, "broadcast", false, true, true},
    {Coll::kAllGather, "allgather", false, false, true},
    {Coll::kReduceScatter, "reducescatter", true, false, true},
    {Coll::kAllToAll, "alltoall", false, false, false},
    {Coll::kGather, "gather", false, true, true},
    {Coll::kScatter, "scatter", false, true, true},
    {Coll::kBarrier, "barrier", false, false, false},
    {Coll::kSendRecv, "sendrecv", false, false, false},
};
const CollInfo& CInfo(Coll c) { return kColls[static_cast<int>(c)]; }

const char* kOpNames[] = {"sum", "prod", "min", "max", "avg"};
const char* kModeNames[] = {"blocking", "wait", "test"};

size_t Words(size_t elems, size_t esize) { return (elems * esize + 7) / 8 + 1; }

std::string Fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.9g", v);
  return b;
}

}  // namespace

const std::vector<Coll>& AllColls() {
  static const std::vector<Coll> kAll = [] {
    std::vector<Coll> v;
    for (const auto& c : kColls) v.push_back(c.coll);
    return v;
  }();
  return kAll;
}
const char* CollName(Coll c) { return CInfo(c).name; }
bool ParseColl(const std::string& s, Coll* out) {
  for (const auto& c : kColls) {
    if (s == c.name) {
      *out = c.coll;
      return true;
    }
  }
  return false;
}
const char* ModeName(Mode m) { return kModeNames[static_cast<int>(m)]; }
bool ParseMode(const std::string& s, Mode* out) {
  for (int i = 0; i < 3; ++i) {
    if (s == kModeNames[i]) {
      *out = static_cast<Mode>(i);
      return true;
    }
  }
  return false;
}
const char* OpName(weftRedOp_t op) { return kOpNames[static_cast<int>(op)]; }
bool ParseOp(const std::string& s, weftRedOp_t* out) {
  for (int i = 0; i < 5; ++i) {
    if (s == kOpNames[i]) {
      *out = static_cast<weftRedOp_t>(i);
      return true;
    }
  }
  return false;
}
bool IsReduction(Coll c) { return CInfo(c).reduction; }
bool IsRooted(Coll c) { return CInfo(c).rooted; }
bool HasInPlace(Coll c) { return CInfo(c).in_place; }

std::string Describe(const Case& c) {
  std::string s = CollName(c.coll);
  if (c.coll == Coll::kBarrier) return s + " mode=" + ModeName(c.mode);
  s += std::string(" dtype=") + Info(c.dtype).name;
  s += std::string(" op=") + (IsReduction(c.coll) ? OpName(c.op) : "-");
  s += " count=" + std::to_string(c.count);
  s += " root=" + (IsRooted(c.coll) ? std::to_string(c.root) : std::string("-"));
  s += c.in_place ? " inplace" : " outofplace";
  s += std::string(" mode=") + ModeName(c.mode);
  return s;
}

namespace {

// Elements of the send and receive buffers of `c` on a world of `nranks` (every rank
// allocates both in full, root or not).
void BufferElems(const Case& c, int nranks, size_t* send, size_t* recv) {
  const size_t n = c.count, all = c.count * static_cast<size_t>(nranks);
  *send = *recv = 0;
  switch (c.coll) {
    case Coll::kAllReduce:
    case Coll::kReduce:
    case Coll::kBroadcast:
    case Coll::kSendRecv:
      *send = *recv = n;
      break;
    case Coll::kAllGather:
    case Coll::kGather:
      *send = n;
      *recv = all;
      break;
    case Coll::kReduceScatter:
    case Coll::kScatter:
      *send = all;
      *recv = n;
      break;
    case Coll::kAllToAll:
      *send = *recv = all;
      break;
    case Coll::kBarrier: break;
  }
}

}  // namespace

size_t CaseRun::BytesNeeded(const Case& c, int nranks) {
  size_t send = 0, recv = 0;
  BufferElems(c, nranks, &send, &recv);
  const size_t es = Info(c.dtype).size;
  return 8 * (Words(send, es) + Words(recv, es)) + 16;  // + alignment
}

size_t CaseRun::LargestBytes(const Case& c, int nranks) {
  size_t send = 0, recv = 0;
  BufferElems(c, nranks, &send, &recv);
  return std::max(send, recv) * Info(c.dtype).size;
}

CaseRun::CaseRun(const Case& c, int rank, int nranks, SharedArena* arena)
    : c_(c), rank_(rank), nranks_(nranks) {
  BufferElems(c, nranks, &send_elems_, &recv_elems_);
  const size_t es = Info(c.dtype).size;
  const size_t send_words = Words(send_elems_, es), recv_words = Words(recv_elems_, es);
  if (arena != nullptr) {
    send_ = static_cast<uint64_t*>(arena->Take(send_words * 8));
    recv_ = static_cast<uint64_t*>(arena->Take(recv_words * 8));
    if (send_ == nullptr || recv_ == nullptr) {  // a bug in the runner: never test plain instead
      std::fprintf(stderr, "collectives_check: the shared arena has no room for %s\n",
                   Describe(c).c_str());
      std::exit(2);
    }
  } else {
    send_words_.resize(send_words);
    recv_words_.resize(recv_words);
    send_ = send_words_.data();
    recv_ = recv_words_.data();
  }
  FillInputs();
}

// NCCL in-place conventions (weft.h): allreduce/reduce/broadcast share one buffer;
// allgather/gather read input at recv + rank*count; reducescatter/scatter write output
// at send + rank*count.
void* CaseRun::SendPtr() {
  if (!c_.in_place) return send_;
  const size_t off = static_cast<size_t>(rank_) * c_.count * Info(c_.dtype).size;
  switch (c_.coll) {
    case Coll::kAllGather:
    case Coll::kGather: return reinterpret_cast<char*>(recv_) + off;
    case Coll::kReduceScatter:
    case Coll::kScatter: return send_;
    default: return recv_;
  }
}

void* CaseRun::RecvPtr() {
  if (c_.in_place && (c_.coll == Coll::kReduceScatter || c_.coll == Coll::kScatter)) {
    return reinterpret_cast<char*>(send_) +
           static_cast<size_t>(rank_) * c_.count * Info(c_.dtype).size;
  }
  return recv_;
}

void CaseRun::FillInputs() {
  const weftDataType_t t = c_.dtype;
  std::optional<weftRedOp_t> op;
  if (IsReduction(c_.coll)) op = c_.op;
  FillSentinel(t, send_, send_elems_);
  FillSentinel(t, recv_, recv_elems_);
  // Which ranks provide input: only the root for broadcast and scatter.
  const bool provides =
      !((c_.coll == Coll::kBroadcast || c_.coll == Coll::kScatter) && rank_ != c_.root);
  if (!provides) return;
  // The input count: what the API reads from sendbuff.
  const size_t in_elems =
      (c_.coll == Coll::kAllGather || c_.coll == Coll::kGather || c_.coll == Coll::kBroadcast ||
       c_.coll == Coll::kAllReduce || c_.coll == Coll::kReduce || c_.coll == Coll::kSendRecv)
          ? c_.count
          : c_.count * static_cast<size_t>(nranks_);
  char* in = static_cast<char*>(SendPtr());
  const CaseValues values(t, op, nranks_, c_.salt);
  WithDType(t, [&](auto dtype) {
    using U = BitsOf<SizeOf(dtype)>;
    for (size_t i = 0; i < in_elems; ++i) {
      const auto bits = static_cast<U>(values.InputBits(rank_, i));
      std::memcpy(in + i * sizeof(U), &bits, sizeof(U));
    }
  });
}

weftResult_t CaseRun::Start(weftComm_t comm, std::string* error) {
  const void* s = SendPtr();
  void* r = RecvPtr();
  const size_t n = c_.count;
  const weftDataType_t t = c_.dtype;
  const bool nb = c_.mode != Mode::kBlocking;
  weftRequest_t req = nullptr;
  weftRequest_t* rq = nb ? &req : nullptr;
  weftResult_t res = weftSuccess;
  const char* fn = "";
  switch (c_.coll) {
    case Coll::kAllReduce:
      fn = nb ? "weftIAllReduce" : "weftAllReduce";
      res =
          nb ? weftIAllReduce(s, r, n, t, c_.op, comm, rq) : weftAllReduce(s, r, n, t, c_.op, comm);
      break;
    case Coll::kReduce:
      fn = nb ? "weftIReduce" : "weftReduce";
      res = nb ? weftIReduce(s, r, n, t, c_.op, c_.root, comm, rq)
               : weftReduce(s, r, n, t, c_.op, c_.root, comm);
      break;
    case Coll::kBroadcast:
      fn = nb ? "weftIBroadcast" : "weftBroadcast";
      res = nb ? weftIBroadcast(s, r, n, t, c_.root, comm, rq)
               : weftBroadcast(s, r, n, t, c_.root, comm);
      break;
    case Coll::kAllGather:
      fn = nb ? "weftIAllGather" : "weftAllGather";
      res = nb ? weftIAllGather(s, r, n, t, comm, rq) : weftAllGather(s, r, n, t, comm);
      break;
    case Coll::kReduceScatter:
      fn = nb ? "weftIReduceScatter" : "weftReduceScatter";
      res = nb ? weftIReduceScatter(s, r, n, t, c_.op, comm, rq)
               : weftReduceScatter(s, r, n, t, c_.op, comm);
      break;
    case Coll::kAllToAll:
      fn = nb ? "weftIAllToAll" : "weftAllToAll";
      res = nb ? weftIAllToAll(s, r, n, t, comm, rq) : weftAllToAll(s, r, n, t, comm);
      break;
    case Coll::kGather:
      fn = nb ? "weftIGather" : "weftGather";
      res = nb ? weftIGather(s, r, n, t, c_.root, comm, rq) : weftGather(s, r, n, t, c_.root, comm);
      break;
    case Coll::kScatter:
      fn = nb ? "weftIScatter" : "weftScatter";
      res =
          nb ? weftIScatter(s, r, n, t, c_.root, comm, rq) : weftScatter(s, r, n, t, c_.root, comm);
      break;
    case Coll::kBarrier:
      fn = nb ? "weftIBarrier" : "weftBarrier";
      res = nb ? weftIBarrier(comm, rq) : weftBarrier(comm);
      break;
    case Coll::kSendRecv: {
      // A ring: send right, receive from the left. Even ranks send first and odd ranks
      // receive first, so the blocking form cannot deadlock even if a send waits for
      // its receiver, and the issue order is valid under in-order execution.
      const int right = (rank_ + 1) % nranks_, left = (rank_ + nranks_ - 1) % nranks_;
      for (int step = 0; step < 2 && res == weftSuccess; ++step) {
        const bool do_send = (step == 0) == (rank_ % 2 == 0);
        weftRequest_t one = nullptr;
        if (do_send) {
          fn = nb ? "weftISend" : "weftSend";
          res = nb ? weftISend(s, n, t, right, comm, &one) : weftSend(s, n, t, right, comm);
        } else {
          fn = nb ? "weftIRecv" : "weftRecv";
          res = nb ? weftIRecv(r, n, t, left, comm, &one) : weftRecv(r, n, t, left, comm);
        }
        if (nb && res == weftSuccess) requests_.push_back(one);
      }
      if (res != weftSuccess) break;
      return res;
    }
  }
  if (res == weftSuccess) {
    if (nb) requests_.push_back(req);
    return res;
  }
  *error = std::string(fn) + " returned " + weftGetErrorString(res) + ": " + weftGetLastError(comm);
  return res;
}

size_t CaseRun::OutputElems() const {
  const size_t n = c_.count, all = n * static_cast<size_t>(nranks_);
  const bool root = rank_ == c_.root;
  switch (c_.coll) {
    case Coll::kAllReduce:
    case Coll::kBroadcast:
    case Coll::kReduceScatter:
    case Coll::kScatter:
    case Coll::kSendRecv: return n;
    case Coll::kReduce: return root ? n : 0;
    case Coll::kGather: return root ? all : 0;
    case Coll::kAllGather:
    case Coll::kAllToAll: return all;
    case Coll::kBarrier: return 0;
  }
  return 0;
}

bool CaseRun::SpoilOneOutput() {
  const size_t outputs = OutputElems();
  if (outputs == 0) return false;
  const size_t es = Info(c_.dtype).size;
  FillSentinel(c_.dtype, static_cast<char*>(RecvPtr()) + (c_.salt % outputs) * es, 1);
  return true;
}

std::string CaseRun::Verify() const {
  return WithDType(c_.dtype, [&](auto dtype) { return VerifyAs<dtype>(); });
}

// Moved data is compared bit for bit with the input it came from; reduced data as a
// value, within the reduction's error bound.
template <weftDataType_t T>
std::string CaseRun::VerifyAs() const {
  using U = BitsOf<SizeOf(T)>;
  const size_t n = c_.count;
  size_t bad = 0, checked = 0;
  std::string first;
  auto fail = [&](const char* what, const void* buf, size_t i, const Expected& e) {
    if (bad++ > 0) return;
    first = std::string(what) + " index " + std::to_string(i) + " got " + Fmt(LoadAs<T>(buf, i)) +
            " expected " + Fmt(e.value);
    if (e.tolerance > 0) first += " (tol " + Fmt(e.tolerance) + ")";
  };
  // Reductions' inputs feed the op; movement collectives' inputs are op-less values.
  std::optional<weftRedOp_t> op;
  if (IsReduction(c_.coll)) op = c_.op;
  const CaseValues values(c_.dtype, op, nranks_, c_.salt);
  auto moved = [&](const char* what, const void* buf, size_t i, int src_rank, size_t src_index) {
    ++checked;
    U got;
    std::memcpy(&got, static_cast<const char*>(buf) + i * sizeof(U), sizeof(U));
    if (got == static_cast<U>(values.InputBits(src_rank, src_index))) return;
    fail(what, buf, i, Expected{values.Input(src_rank, src_index), 0});
  };
  auto reduced = [&](const void* buf, size_t i, size_t index) {
    ++checked;
    const Expected e = values.Reduced(index);
    if (!Matches(e, LoadAs<T>(buf, i))) fail("recvbuff", buf, i, e);
  };
  auto* self = const_cast<CaseRun*>(this);  // the pointer helpers do not modify
  const void* out = self->RecvPtr();
  const bool root = rank_ == c_.root;
  const char* kOut = "recvbuff";

  switch (c_.coll) {
    case Coll::kAllReduce:
      for (size_t i = 0; i < n; ++i) reduced(out, i, i);
      break;
    case Coll::kReduce:
      if (root)
        for (size_t i = 0; i < n; ++i) reduced(out, i, i);
      break;
    case Coll::kBroadcast:
      for (size_t i = 0; i < n; ++i) moved(kOut, out, i, c_.root, i);
      break;
    case Coll::kAllGather:
      for (int p = 0; p < nranks_; ++p)
        for (size_t i = 0; i < n; ++i) moved(kOut, out, p * n + i, p, i);
      break;
    case Coll::kGather:
      if (root)
        for (int p = 0; p < nranks_; ++p)
          for (size_t i = 0; i < n; ++i) moved(kOut, out, p * n + i, p, i);
      break;
    case Coll::kReduceScatter:
      for (size_t i = 0; i < n; ++i) reduced(out, i, rank_ * n + i);
      break;
    case Coll::kScatter:
      for (size_t i = 0; i < n; ++i) moved(kOut, out, i, c_.root, rank_ * n + i);
      break;
    case Coll::kAllToAll:
      for (int p = 0; p < nranks_; ++p)
        for (size_t i = 0; i < n; ++i) moved(kOut, out, p * n + i, p, rank_ * n + i);
      break;
    case Coll::kSendRecv:
      for (size_t i = 0; i < n; ++i) moved(kOut, out, i, (rank_ + nranks_ - 1) % nranks_, i);
      break;
    case Coll::kBarrier: break;
  }
  // Out of place, the send buffer is const: it must come back unchanged.
  const bool has_input = !((c_.coll == Coll::kBroadcast || c_.coll == Coll::kScatter) && !root);
  if (!c_.in_place && has_input && c_.coll != Coll::kBarrier) {
    for (size_t i = 0; i < send_elems_; ++i) moved("sendbuff (modified)", send_, i, rank_, i);
  }
  if (bad == 0) return "";
  return "FAIL " + Describe(c_) + " rank=" + std::to_string(rank_) + ": " + first + " [" +
         std::to_string(bad) + " of " + std::to_string(checked) + " elements wrong]";
}

}  // namespace check
