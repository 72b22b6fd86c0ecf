// The C API of one-sided windows (weft.h, "One-sided windows"; comm/window.h).
#include <fmt/format.h>

#include <memory>

#include "comm/api_internal.h"
#include "comm/window.h"
#include "weft/weft.h"

struct weftWindow {
  std::unique_ptr<weft::comm::Window> impl;
};

using weft::comm::api::Report;

namespace {

// A result of the communicator's own calls, back as a Status with its message.
weft::Status FromResult(weftResult_t r, weftComm_t comm) {
  std::string why = weftGetLastError(comm);
  switch (r) {
    case weftSuccess: return weft::Status::Ok();
    case weftInvalidArgument: return weft::InvalidArgument(why);
    case weftInvalidUsage: return weft::InvalidUsage(why);
    case weftTimeout: return weft::DeadlineExceeded(why);
    case weftRemoteError: return weft::Unavailable(why);
    case weftAborted: return weft::Aborted(why);
    default: return weft::Internal(why);
  }
}

weftResult_t NoWindow() { return Report(nullptr, weft::InvalidArgument("the window is NULL")); }

}  // namespace

weftResult_t weftWinCreate(weftComm_t comm, void* buff, size_t size, weftWindow_t* win) {
  if (comm == nullptr) return weft::comm::api::NoComm();
  const int rank = comm->impl->rank();
  if (win == nullptr) {
    return Report(comm,
                  weft::InvalidArgument(fmt::format("rank {}: weftWinCreate: win is NULL", rank)));
  }
  *win = nullptr;
  auto allgather = [comm](const void* mine, void* all, size_t bytes) {
    return FromResult(weftAllGather(mine, all, bytes, weftUint8, comm), comm);
  };
  auto w = weft::comm::Window::Create(rank, comm->impl->size(), buff, size, comm->impl->timeout_s(),
                                      allgather);
  if (!w.ok()) return Report(comm, w.status());
  *win = new weftWindow{std::move(w).value()};
  return weftSuccess;
}

// After creation a window is on its own (it may outlive its communicator): its errors go
// to this thread's last error.
weftResult_t weftWinFree(weftWindow_t win) {
  if (win == nullptr) return NoWindow();
  delete win;
  return weftSuccess;
}

weftResult_t weftWinPeerPtr(weftWindow_t win, int rank, void** ptr, size_t* size) {
  if (win == nullptr) return NoWindow();
  if (ptr == nullptr || size == nullptr)
    return Report(nullptr, weft::InvalidArgument("weftWinPeerPtr: ptr or size is NULL"));
  return Report(nullptr, win->impl->Peer(rank, ptr, size));
}

weftResult_t weftWinPut(weftWindow_t win, const void* src, size_t bytes, int peer, size_t offset) {
  if (win == nullptr) return NoWindow();
  return Report(nullptr, win->impl->Put(src, bytes, peer, offset));
}

weftResult_t weftWinSignal(weftWindow_t win, int peer) {
  if (win == nullptr) return NoWindow();
  return Report(nullptr, win->impl->Signal(peer));
}

weftResult_t weftWinWaitSignal(weftWindow_t win, int peer, uint64_t timeout_ms) {
  if (win == nullptr) return NoWindow();
  return Report(
      nullptr, win->impl->WaitSignal(peer, timeout_ms > 0 ? static_cast<double>(timeout_ms) / 1000.0
                                                          : win->impl->timeout_s()));
}
