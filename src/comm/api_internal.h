// What the C API's files (api*.cc) share: the handles behind weft.h's opaque types, and
// the plumbing from a C call to the communicator and from a Status to a weftResult_t.
// Nothing here throws or aborts.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "comm/call.h"
#include "comm/communicator.h"
#include "comm/request.h"
#include "core/status.h"
#include "weft/weft.h"

struct weftComm {
  // Shared with the requests, so that one completed after weftCommAbort (which frees the
  // handle and what the communicator owns) can still report its error.
  std::shared_ptr<weft::comm::Communicator> impl;
  std::atomic<int> calls{0};  // API calls inside this handle (weftCommAbort waits for them)
};

struct weftRequest {
  std::shared_ptr<weft::comm::Request> impl;
  std::shared_ptr<weft::comm::Communicator> comm;
};

namespace weft::comm::api {

// The last error of this thread's calls without a communicator: weftGetLastError(NULL).
extern thread_local std::string t_last_error;

weftResult_t ToResult(const Status& st);
// Records a failure for weftGetLastError (on `comm`, or this thread's without one) and
// maps it.
weftResult_t Report(weftComm_t comm, const Status& st);
weftResult_t NoComm();

// A call's three ways in. Blocking: runs it and returns its result. NonBlocking: issues
// it and sets *request. OnStream: orders it on `stream` (docs/GPU.md). Inside
// weftGroupStart/End, Blocking and OnStream check the call and return; the group's end
// issues it (comm/call_group.h).
weftResult_t Blocking(weftComm_t comm, const Call& call);
weftResult_t NonBlocking(weftComm_t comm, const Call& call, weftRequest_t* request);
weftResult_t OnStream(weftComm_t comm, const Call& call, weftStream_t stream);

Call PointToPoint(CallKind kind, const void* send, void* recv, size_t count, weftDataType_t dt,
                  int peer, int tag = 0);

}  // namespace weft::comm::api
