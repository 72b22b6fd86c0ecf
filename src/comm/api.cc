// The C API: communicators, collectives, requests and errors, with the plumbing the
// other api*.cc files share (api_internal.h): point-to-point is in api_p2p.cc, group
// calls in api_group.cc. Nothing here throws or aborts.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/api_internal.h"
#include "comm/call_group.h"
#include "comm/communicator.h"
#include "comm/init.h"
#include "comm/registry.h"
#include "comm/shrink.h"
#include "comm/unique_id.h"
#include "core/env.h"
#include "gpu/runtime.h"
#include "transport/shm/shared_buffer.h"
#include "weft/weft.h"

namespace weft::comm::api {

using weft::Code;
using weft::Status;
using weft::comm::Call;
using weft::comm::CallKind;
using weft::sched::Collective;

thread_local std::string t_last_error;
thread_local std::string t_comm_error;  // stable storage for weftGetLastError(comm)

weftResult_t ToResult(const Status& st) {
  switch (st.code()) {
    case Code::kOk: return weftSuccess;
    case Code::kInvalidArgument: return weftInvalidArgument;
    case Code::kInvalidUsage: return weftInvalidUsage;
    case Code::kDeadlineExceeded: return weftTimeout;
    case Code::kUnavailable: return weftRemoteError;
    case Code::kProtocolError: return weftRemoteError;
    case Code::kAborted: return weftAborted;
    case Code::kSystemError: return weftSystemError;
    case Code::kInternal: return weftInternalError;
  }
  return weftInternalError;
}

weftResult_t Report(weftComm_t comm, const Status& st) {
  if (!st.ok()) {
    if (comm != nullptr)
      comm->impl->SetLastError(st);
    else
      t_last_error = st.ToString();
  }
  return ToResult(st);
}

// A request's result: recorded on its communicator and, since the handle may have been
// aborted (freed) meanwhile, for weftGetLastError(NULL) on this thread as well.
weftResult_t ReportRequest(const weftRequest& req, const Status& st) {
  if (!st.ok()) {
    req.comm->SetLastError(st);
    t_last_error = st.ToString();
  }
  return ToResult(st);
}

// Counts a call inside a handle for the duration of a scope.
class InCall {
 public:
  explicit InCall(weftComm_t comm) : comm_(comm) { comm_->calls.fetch_add(1); }
  ~InCall() { comm_->calls.fetch_sub(1); }
  InCall(const InCall&) = delete;
  InCall& operator=(const InCall&) = delete;

 private:
  weftComm_t comm_;
};

weftResult_t NoComm() {
  t_last_error = "InvalidArgument: communicator is NULL";
  return weftInvalidArgument;
}

namespace {

// Inside weftGroupStart/End: checked now, issued and waited for at the end.
weftResult_t Grouped(weftComm_t comm, const Call& call, weftStream_t stream) {
  auto checked = comm->impl->CheckForGroup(call);
  if (!checked.ok()) return Report(comm, checked.status());
  CallGroup::ThisThread().Defer(comm->impl, checked.value(), stream);
  return weftSuccess;
}

}  // namespace

weftResult_t Blocking(weftComm_t comm, const Call& call) {
  if (comm == nullptr) return NoComm();
  InCall in(comm);
  if (CallGroup::ThisThread().open()) return Grouped(comm, call, nullptr);
  return Report(comm, comm->impl->Run(call));
}

weftResult_t NonBlocking(weftComm_t comm, const Call& call, weftRequest_t* request) {
  if (comm == nullptr) return NoComm();
  InCall in(comm);
  if (request == nullptr)
    return Report(comm, weft::InvalidArgument("request pointer is NULL"));
  *request = nullptr;
  auto r = comm->impl->Submit(call);
  if (!r.ok()) return Report(comm, r.status());
  *request = new weftRequest{std::move(r).value(), comm->impl};
  return weftSuccess;
}

weftResult_t OnStream(weftComm_t comm, const Call& call, weftStream_t stream) {
  if (comm == nullptr) return NoComm();
  InCall in(comm);
  if (CallGroup::ThisThread().open()) return Grouped(comm, call, stream);
  return Report(comm, comm->impl->RunOnStream(call, stream));
}

Call Collective(Collective coll, const void* send, void* recv, size_t count, weftDataType_t dt,
                weftRedOp_t op, int root) {
  return weft::comm::MakeCollective(coll, send, recv, count, static_cast<weft::DataType>(dt),
                                    static_cast<weft::RedOp>(op), root);
}

Call PointToPoint(CallKind kind, const void* send, void* recv, size_t count, weftDataType_t dt,
                  int peer, int tag) {
  return weft::comm::MakePointToPoint(kind, send, recv, count, static_cast<weft::DataType>(dt),
                                      peer, tag);
}

}  // namespace weft::comm::api

using namespace weft::comm::api;  // NOLINT(build/namespaces): the C functions' plumbing

extern "C" {

const char* weftGetErrorString(weftResult_t result) {
  switch (result) {
    case weftSuccess: return "no error";
    case weftInvalidArgument: return "invalid argument";
    case weftInvalidUsage: return "invalid usage (ranks disagree on the call)";
    case weftSystemError: return "system error";
    case weftInternalError: return "internal error";
    case weftTimeout: return "timeout (a wait exceeded the call's timeout)";
    case weftRemoteError: return "remote error (a peer failed or sent garbage)";
    case weftAborted: return "communicator aborted or failed";
    case weftInProgress: return "operation in progress";
    default: return "unknown weft result code";
  }
}

const char* weftGetLastError(weftComm_t comm) {
  if (comm == nullptr) return t_last_error.c_str();
  t_comm_error = comm->impl->LastError();
  return t_comm_error.c_str();
}

weftResult_t weftGetVersion(int* version) {
  if (version == nullptr) return Report(nullptr, weft::InvalidArgument("version is NULL"));
  *version = WEFT_VERSION_CODE;
  return weftSuccess;
}

weftResult_t weftGetUniqueId(weftUniqueId* id) {
  if (id == nullptr) return Report(nullptr, weft::InvalidArgument("uniqueId is NULL"));
  return Report(nullptr, weft::comm::NewUniqueId(id));
}

weftResult_t weftUniqueIdDerive(const weftUniqueId* base, uint64_t salt, weftUniqueId* derived) {
  if (base == nullptr || derived == nullptr)
    return Report(nullptr,
                  weft::InvalidArgument(base == nullptr ? "base is NULL" : "derived is NULL"));
  auto text = weft::comm::DeriveUniqueId(
      std::string_view(base->internal, strnlen(base->internal, sizeof(base->internal))), salt);
  if (!text.ok()) return Report(nullptr, text.status().WithContext("weftUniqueIdDerive"));
  // Same store and secret, a nonce of the same width: it fits where `base` did.
  if (text->size() >= sizeof(derived->internal))
    return Report(nullptr, weft::Internal("weftUniqueIdDerive: the derived id does not fit"));
  weftUniqueId out;
  std::memset(out.internal, 0, sizeof(out.internal));
  std::memcpy(out.internal, text->data(), text->size());
  *derived = out;  // `derived` may be `base`
  return weftSuccess;
}

static weftResult_t Adopt(weftComm_t* out,
                          weft::Result<std::unique_ptr<weft::comm::Communicator>> r) {
  if (!r.ok()) return Report(nullptr, r.status());
  *out = new weftComm{std::move(r).value()};
  return weftSuccess;
}

weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId id, int rank) {
  return weftCommInitRankConfig(comm, nranks, id, rank, nullptr);
}

weftResult_t weftCommInitRankConfig(weftComm_t* comm, int nranks, weftUniqueId id, int rank,
                                    const weftConfig_t* config) {
  if (comm == nullptr) return Report(nullptr, weft::InvalidArgument("comm pointer is NULL"));
  *comm = nullptr;
  auto options = weft::comm::OptionsFromConfig(config);
  if (!options.ok()) {
    return Report(nullptr, options.status().WithContext(
                               fmt::format("rank {}: init (weftCommInitRankConfig)", rank)));
  }
  return Adopt(comm, weft::comm::InitRank(nranks, id, rank, options.value()));
}

weftResult_t weftCommInitFromEnv(weftComm_t* comm) {
  if (comm == nullptr) return Report(nullptr, weft::InvalidArgument("comm pointer is NULL"));
  *comm = nullptr;
  return Adopt(comm, weft::comm::InitFromEnv());
}

weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm) {
  return weftCommSplitConfig(comm, color, key, newcomm, nullptr);
}

weftResult_t weftCommSplitConfig(weftComm_t comm, int color, int key, weftComm_t* newcomm,
                                 const weftConfig_t* config) {
  if (comm == nullptr) return NoComm();
  InCall in(comm);
  if (newcomm == nullptr) return Report(comm, weft::InvalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  auto options = weft::comm::OptionsFromConfig(config);
  if (!options.ok()) {
    return Report(comm, options.status().WithContext(fmt::format(
                            "rank {}: split (weftCommSplitConfig)", comm->impl->rank())));
  }
  auto r = comm->impl->Split(color, key, options.value());
  if (!r.ok()) return Report(comm, r.status());
  if (r.value()) *newcomm = new weftComm{std::move(r).value()};
  return weftSuccess;
}

weftResult_t weftCommShrink(weftComm_t comm, const int* excludeRanks, int nExclude,
                            weftComm_t* newcomm, int flags) {
  if (comm == nullptr) return NoComm();
  InCall in(comm);
  if (newcomm == nullptr) return Report(comm, weft::InvalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  if (nExclude < 0 || (nExclude > 0 && excludeRanks == nullptr))
    return Report(comm, weft::InvalidArgument(
                            "rank " + std::to_string(comm->impl->rank()) +
                            ": weftCommShrink: nExclude is " + std::to_string(nExclude) +
                            "; it must be >= 0, with excludeRanks non-NULL when > 0"));
  if ((flags & ~WEFT_SHRINK_ABORT) != 0)
    return Report(comm, weft::InvalidArgument(
                            "rank " + std::to_string(comm->impl->rank()) +
                            ": weftCommShrink: unknown flags " + std::to_string(flags) +
                            " (WEFT_SHRINK_DEFAULT or WEFT_SHRINK_ABORT)"));
  std::vector<int> exclude(excludeRanks, excludeRanks + nExclude);
  auto r = weft::comm::Shrink(*comm->impl, exclude, (flags & WEFT_SHRINK_ABORT) != 0);
  if (!r.ok()) return Report(comm, r.status());
  *newcomm = new weftComm{std::move(r).value()};
  return weftSuccess;
}

weftResult_t weftCommDestroy(weftComm_t comm) {
  delete comm;
  return weftSuccess;
}

weftResult_t weftCommAbort(weftComm_t comm) {
  if (comm == nullptr) return NoComm();
  comm->impl->Abort();
  // Calls running on other threads now return Aborted within a poll interval; free the
  // handle once they have left it. Only a call that cannot see the abort (a split
  // connecting its new communicator, bounded by WEFT_TIMEOUT) outlasts the bound; the
  // handle is then leaked rather than freed under it.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (comm->calls.load() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (comm->calls.load() > 0) {
    t_last_error = "weftCommAbort: a call on another thread is still inside the communicator "
                   "after 2 s; its handle is leaked, not freed (everything else was)";
    return weftSuccess;
  }
  delete comm;
  return weftSuccess;
}

weftResult_t weftCommCount(const weftComm_t comm, int* count) {
  if (comm == nullptr) return NoComm();
  if (count == nullptr) return Report(comm, weft::InvalidArgument("count is NULL"));
  *count = comm->impl->size();
  return weftSuccess;
}

weftResult_t weftMemAlloc(void** ptr, size_t size) {
  if (ptr == nullptr) return Report(nullptr, weft::InvalidArgument("weftMemAlloc: ptr is NULL"));
  *ptr = nullptr;
  auto r = weft::transport::shm::SharedAlloc(size);
  if (!r.ok()) return Report(nullptr, r.status());
  *ptr = r.value();
  return weftSuccess;
}

weftResult_t weftMemFree(void* ptr) {
  return Report(nullptr, weft::transport::shm::SharedFree(ptr));
}

weftResult_t weftCommRegister(const weftComm_t comm, void* buff, size_t size, void** handle) {
  if (comm == nullptr) return NoComm();
  std::string rank = "rank " + std::to_string(comm->impl->rank());
  if (handle == nullptr)
    return Report(comm, weft::InvalidArgument(rank + ": weftCommRegister: handle is NULL"));
  *handle = nullptr;
  auto r = comm->impl->registry().Register(buff, size);
  if (!r.ok()) return Report(comm, r.status().WithContext(rank));
  *handle = reinterpret_cast<void*>(static_cast<uintptr_t>(r.value()));
  return weftSuccess;
}

weftResult_t weftCommDeregister(const weftComm_t comm, void* handle) {
  if (comm == nullptr) return NoComm();
  uint64_t id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  return Report(comm, comm->impl->registry().Deregister(id).WithContext(
                          "rank " + std::to_string(comm->impl->rank())));
}

weftResult_t weftCommSetTimeout(weftComm_t comm, uint64_t timeout_ms) {
  if (comm == nullptr) return NoComm();
  if (timeout_ms == 0) {
    return Report(comm, weft::InvalidArgument(fmt::format(
                            "rank {}: weftCommSetTimeout: timeout_ms is 0; give a positive "
                            "number of milliseconds", comm->impl->rank())));
  }
  comm->impl->SetTimeout(static_cast<double>(timeout_ms) / 1000.0);
  return weftSuccess;
}

weftResult_t weftGetDefaultTimeout(uint64_t* timeout_ms) {
  if (timeout_ms == nullptr) return Report(nullptr, weft::InvalidArgument("timeout_ms is NULL"));
  auto seconds = weft::TimeoutSeconds();
  if (!seconds.ok()) return Report(nullptr, seconds.status());
  *timeout_ms = static_cast<uint64_t>(seconds.value() * 1000.0 + 0.5);  // as below
  return weftSuccess;
}

weftResult_t weftCommGetTimeout(const weftComm_t comm, uint64_t* timeout_ms) {
  if (comm == nullptr) return NoComm();
  if (timeout_ms == nullptr) {
    return Report(comm, weft::InvalidArgument(fmt::format(
                            "rank {}: weftCommGetTimeout: timeout_ms is NULL",
                            comm->impl->rank())));
  }
  // Rounded: WEFT_TIMEOUT may give fractions of a millisecond.
  *timeout_ms = static_cast<uint64_t>(comm->impl->timeout_s() * 1000.0 + 0.5);
  return weftSuccess;
}

weftResult_t weftCommUserRank(const weftComm_t comm, int* rank) {
  if (comm == nullptr) return NoComm();
  if (rank == nullptr) return Report(comm, weft::InvalidArgument("rank is NULL"));
  *rank = comm->impl->rank();
  return weftSuccess;
}

weftResult_t weftCommGetLastAlgorithm(const weftComm_t comm, const char** name) {
  if (comm == nullptr) return NoComm();
  if (name == nullptr) return Report(comm, weft::InvalidArgument("name is NULL"));
  *name = comm->impl->last_algorithm();
  return weftSuccess;
}

weftResult_t weftAllReduce(const void* s, void* r, size_t n, weftDataType_t dt, weftRedOp_t op,
                           weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kAllReduce, s, r, n, dt, op, 0));
}
weftResult_t weftReduce(const void* s, void* r, size_t n, weftDataType_t dt, weftRedOp_t op,
                        int root, weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kReduce, s, r, n, dt, op, root));
}
weftResult_t weftBroadcast(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                           weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kBroadcast, s, r, n, dt, weftSum, root));
}
weftResult_t weftAllGather(const void* s, void* r, size_t n, weftDataType_t dt, weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kAllGather, s, r, n, dt, weftSum, 0));
}
weftResult_t weftReduceScatter(const void* s, void* r, size_t n, weftDataType_t dt,
                               weftRedOp_t op, weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kReduceScatter, s, r, n, dt, op, 0));
}
weftResult_t weftAllToAll(const void* s, void* r, size_t n, weftDataType_t dt, weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kAllToAll, s, r, n, dt, weftSum, 0));
}
weftResult_t weftGather(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                        weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kGather, s, r, n, dt, weftSum, root));
}
weftResult_t weftScatter(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                         weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kScatter, s, r, n, dt, weftSum, root));
}
weftResult_t weftBarrier(weftComm_t comm) {
  return Blocking(comm, Collective(Collective::kBarrier, nullptr, nullptr, 0, weftUint8, weftSum, 0));
}

weftResult_t weftIAllReduce(const void* s, void* r, size_t n, weftDataType_t dt, weftRedOp_t op,
                            weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kAllReduce, s, r, n, dt, op, 0), req);
}
weftResult_t weftIReduce(const void* s, void* r, size_t n, weftDataType_t dt, weftRedOp_t op,
                         int root, weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kReduce, s, r, n, dt, op, root), req);
}
weftResult_t weftIBroadcast(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                            weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kBroadcast, s, r, n, dt, weftSum, root), req);
}
weftResult_t weftIAllGather(const void* s, void* r, size_t n, weftDataType_t dt, weftComm_t comm,
                            weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kAllGather, s, r, n, dt, weftSum, 0), req);
}
weftResult_t weftIReduceScatter(const void* s, void* r, size_t n, weftDataType_t dt,
                                weftRedOp_t op, weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kReduceScatter, s, r, n, dt, op, 0), req);
}
weftResult_t weftIAllToAll(const void* s, void* r, size_t n, weftDataType_t dt, weftComm_t comm,
                           weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kAllToAll, s, r, n, dt, weftSum, 0), req);
}
weftResult_t weftIGather(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                         weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kGather, s, r, n, dt, weftSum, root), req);
}
weftResult_t weftIScatter(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                          weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, Collective(Collective::kScatter, s, r, n, dt, weftSum, root), req);
}
weftResult_t weftIBarrier(weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(
      comm, Collective(Collective::kBarrier, nullptr, nullptr, 0, weftUint8, weftSum, 0), req);
}

weftResult_t weftAllReduceStream(const void* s, void* r, size_t n, weftDataType_t dt,
                                 weftRedOp_t op, weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kAllReduce, s, r, n, dt, op, 0), st);
}
weftResult_t weftReduceStream(const void* s, void* r, size_t n, weftDataType_t dt,
                              weftRedOp_t op, int root, weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kReduce, s, r, n, dt, op, root), st);
}
weftResult_t weftBroadcastStream(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                                 weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kBroadcast, s, r, n, dt, weftSum, root), st);
}
weftResult_t weftAllGatherStream(const void* s, void* r, size_t n, weftDataType_t dt,
                                 weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kAllGather, s, r, n, dt, weftSum, 0), st);
}
weftResult_t weftReduceScatterStream(const void* s, void* r, size_t n, weftDataType_t dt,
                                     weftRedOp_t op, weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kReduceScatter, s, r, n, dt, op, 0), st);
}
weftResult_t weftAllToAllStream(const void* s, void* r, size_t n, weftDataType_t dt,
                                weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kAllToAll, s, r, n, dt, weftSum, 0), st);
}
weftResult_t weftGatherStream(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                              weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kGather, s, r, n, dt, weftSum, root), st);
}
weftResult_t weftScatterStream(const void* s, void* r, size_t n, weftDataType_t dt, int root,
                               weftComm_t comm, weftStream_t st) {
  return OnStream(comm, Collective(Collective::kScatter, s, r, n, dt, weftSum, root), st);
}
weftResult_t weftBarrierStream(weftComm_t comm, weftStream_t st) {
  return OnStream(
      comm, Collective(Collective::kBarrier, nullptr, nullptr, 0, weftUint8, weftSum, 0), st);
}

weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError) {
  if (comm == nullptr) return NoComm();
  if (asyncError == nullptr) return Report(comm, weft::InvalidArgument("asyncError is NULL"));
  Status st = comm->impl->AsyncError();
  *asyncError = ToResult(st);
  if (!st.ok()) comm->impl->SetLastError(st);
  return weftSuccess;
}

int weftCudaAvailable(void) { return weft::gpu::Available() ? 1 : 0; }

const char* weftCudaUnavailableReason(void) {
  static const std::string reason = weft::gpu::UnavailableReason();
  return reason.c_str();
}

weftResult_t weftWait(weftRequest_t request) {
  if (request == nullptr) return Report(nullptr, weft::InvalidArgument("request is NULL"));
  std::unique_ptr<weftRequest> owned(request);
  // The call is bounded by WEFT_TIMEOUT on the worker; this outer bound only guards
  // against a worker stuck behind many queued calls.
  Status st = owned->impl->Wait(weft::Deadline::AfterSeconds(24 * 3600));
  return ReportRequest(*owned, st);
}

weftResult_t weftTest(weftRequest_t request, int* done) {
  if (request == nullptr || done == nullptr)
    return Report(nullptr, weft::InvalidArgument("request or done is NULL"));
  if (!request->impl->Done()) {
    *done = 0;
    return weftSuccess;
  }
  *done = 1;
  std::unique_ptr<weftRequest> owned(request);
  return ReportRequest(*owned, owned->impl->status());
}

}  // extern "C"
