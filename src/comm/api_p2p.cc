// The C API's point-to-point calls: send and receive, blocking, non-blocking and on a
// stream, untagged (tag 0) and tagged, and receives from any source.
#include "comm/api_internal.h"

using weft::comm::Call;
using weft::comm::CallKind;
using weft::comm::api::Blocking;
using weft::comm::api::NonBlocking;
using weft::comm::api::OnStream;
using weft::comm::api::PointToPoint;

namespace {

Call AnySource(void* r, size_t n, weftDataType_t dt, int tag, int* source) {
  Call c = PointToPoint(CallKind::kRecv, nullptr, r, n, dt, weft::comm::kAnySource, tag);
  c.source = source;
  return c;
}

}  // namespace

extern "C" {

weftResult_t weftSend(const void* s, size_t n, weftDataType_t dt, int peer, weftComm_t comm) {
  return Blocking(comm, PointToPoint(CallKind::kSend, s, nullptr, n, dt, peer));
}

weftResult_t weftRecv(void* r, size_t n, weftDataType_t dt, int peer, weftComm_t comm) {
  return Blocking(comm, PointToPoint(CallKind::kRecv, nullptr, r, n, dt, peer));
}

weftResult_t weftISend(const void* s, size_t n, weftDataType_t dt, int peer, weftComm_t comm,
                       weftRequest_t* req) {
  return NonBlocking(comm, PointToPoint(CallKind::kSend, s, nullptr, n, dt, peer), req);
}

weftResult_t weftIRecv(void* r, size_t n, weftDataType_t dt, int peer, weftComm_t comm,
                       weftRequest_t* req) {
  return NonBlocking(comm, PointToPoint(CallKind::kRecv, nullptr, r, n, dt, peer), req);
}

weftResult_t weftSendStream(const void* s, size_t n, weftDataType_t dt, int peer, weftComm_t comm,
                            weftStream_t st) {
  return OnStream(comm, PointToPoint(CallKind::kSend, s, nullptr, n, dt, peer), st);
}

weftResult_t weftRecvStream(void* r, size_t n, weftDataType_t dt, int peer, weftComm_t comm,
                            weftStream_t st) {
  return OnStream(comm, PointToPoint(CallKind::kRecv, nullptr, r, n, dt, peer), st);
}

weftResult_t weftSendTagged(const void* s, size_t n, weftDataType_t dt, int peer, int tag,
                            weftComm_t comm) {
  return Blocking(comm, PointToPoint(CallKind::kSend, s, nullptr, n, dt, peer, tag));
}

weftResult_t weftRecvTagged(void* r, size_t n, weftDataType_t dt, int peer, int tag,
                            weftComm_t comm) {
  return Blocking(comm, PointToPoint(CallKind::kRecv, nullptr, r, n, dt, peer, tag));
}

weftResult_t weftISendTagged(const void* s, size_t n, weftDataType_t dt, int peer, int tag,
                             weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, PointToPoint(CallKind::kSend, s, nullptr, n, dt, peer, tag), req);
}

weftResult_t weftIRecvTagged(void* r, size_t n, weftDataType_t dt, int peer, int tag,
                             weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, PointToPoint(CallKind::kRecv, nullptr, r, n, dt, peer, tag), req);
}

weftResult_t weftSendStreamTagged(const void* s, size_t n, weftDataType_t dt, int peer, int tag,
                                  weftComm_t comm, weftStream_t st) {
  return OnStream(comm, PointToPoint(CallKind::kSend, s, nullptr, n, dt, peer, tag), st);
}

weftResult_t weftRecvStreamTagged(void* r, size_t n, weftDataType_t dt, int peer, int tag,
                                  weftComm_t comm, weftStream_t st) {
  return OnStream(comm, PointToPoint(CallKind::kRecv, nullptr, r, n, dt, peer, tag), st);
}

weftResult_t weftRecvAny(void* r, size_t n, weftDataType_t dt, int tag, int* source,
                         weftComm_t comm) {
  return Blocking(comm, AnySource(r, n, dt, tag, source));
}

weftResult_t weftIRecvAny(void* r, size_t n, weftDataType_t dt, int tag, int* source,
                          weftComm_t comm, weftRequest_t* req) {
  return NonBlocking(comm, AnySource(r, n, dt, tag, source), req);
}

}  // extern "C"
