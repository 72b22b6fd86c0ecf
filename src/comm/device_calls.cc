#include "comm/device_calls.h"

#include <vector>

#include <fmt/format.h>

#include "comm/failure.h"
#include "gpu/runtime.h"

namespace weft::comm {

bool DeviceCalls::HasDeviceBuffer(const Call& call) {
  if (!gpu::Available()) return false;  // decided once per process; then free
  return gpu::Classify(call.send).device || gpu::Classify(call.recv).device;
}

Result<int> DeviceCalls::DeviceOf(const Call& call) const {
  const char* name = CallName(call);
  if (!gpu::Available())
    return InvalidArgument(fmt::format("rank {}: {}: a CUDA stream was given, but {}",
                                       host_.rank, name, gpu::UnavailableReason()));
  int device = -1;
  for (const void* p : {call.send, static_cast<const void*>(call.recv)}) {
    gpu::PointerInfo info = gpu::Classify(p);
    if (!info.device) continue;
    if (device >= 0 && info.device_id != device)
      return InvalidArgument(fmt::format("rank {}: {}: the buffers are on two devices ({} and {})",
                                         host_.rank, name, device, info.device_id));
    device = info.device_id;
  }
  return device < 0 ? gpu::CurrentDevice() : device;
}

Status DeviceCalls::Admit(Task& task, int device, void* stream, StreamShare* share) {
  const char* name = CallName(task.call);
  if (!path_) {
    WEFT_ASSIGN_OR_RETURN(path_, DevicePath::Create(device, host_));
  }
  if (device != path_->device())
    return InvalidArgument(fmt::format(
        "rank {}: {}: buffers on CUDA device {}, but this communicator uses device {} "
        "(one device per rank, as in NCCL)",
        host_.rank, name, device, path_->device()));
  if (path_->StagesOnStream(task.call)) {
    auto staged = path_->staging().Enqueue(task.call, stream);
    if (!staged.ok())
      return staged.status().WithContext(
          fmt::format("rank {}: {}: staging on the stream", host_.rank, name));
    task.device = true;
    task.staged = std::move(staged).value();
    return Status::Ok();
  }
  if (share != nullptr && share->gate_ != nullptr) {
    task.device = true;
    task.ticket = gpu::StreamGate::Share(share->ticket_);
    return Status::Ok();
  }
  auto ticket = path_->gate().Begin(stream);
  if (!ticket.ok())
    return ticket.status().WithContext(
        fmt::format("rank {}: {}: ordering on the stream", host_.rank, name));
  task.device = true;
  task.ticket = ticket.value();
  if (share != nullptr) {
    share->gate_ = &path_->gate();
    share->ticket_ = task.ticket;
    task.ticket = gpu::StreamGate::Share(share->ticket_);
  }
  return Status::Ok();
}

void DeviceCalls::Release(const Task& task) {
  // A queued device call holds a ticket on its stream: release it, or a stream parked
  // behind the call (WEFT_CUDA_STREAM_WAIT=memop) would wait forever.
  if (task.staged) {
    StreamStaging::Release(*task.staged);
  } else if (task.device && path_) {
    path_->gate().Release(task.ticket);
  }
}

Status DeviceCalls::RunStaged(Task& task, const Status& failure) {
  if (!failure.ok()) {
    StreamStaging::Release(*task.staged);
    return RefusedAfterFailure(host_.rank, task.call, failure);
  }
  // A mismatch is refused on every rank alike, before any data moved: no fail here.
  Status checked = hooks_.check(task.call, task.seq);
  if (!checked.ok()) {
    StreamStaging::Release(*task.staged);
    return checked;
  }
  Status st = path_->staging().RunHost(
      *task.staged, CallDeadline(task.call), hooks_.abort,
      [&](const Call& host_call) { return host_.execute(host_call, task.seq); });
  if (!st.ok()) {
    st = st.WithContext(fmt::format("rank {}: {} seq {} staged on the stream", host_.rank,
                                    CallName(task.call), task.seq));
    if (IsFatal(st)) hooks_.fail(st);
  }
  return st;
}

Status DeviceCalls::RunCollective(Task& task, const Status& failure) {
  Status st;
  if (!failure.ok()) {
    st = RefusedAfterFailure(host_.rank, task.call, failure);
  } else {
    Deadline deadline = CallDeadline(task.call);
    st = gpu::SetDevice(path_->device());
    if (st.ok()) st = path_->gate().WaitReady(task.ticket, deadline);
    if (st.ok()) {
      // A mismatch is refused on every rank alike, before any data moved: no fail here.
      Status checked = hooks_.check(task.call, task.seq);
      if (!checked.ok()) {
        path_->gate().Release(task.ticket);
        return checked;
      }
    }
    if (st.ok()) st = path_->RunCollective(task.call, task.seq, deadline);
    if (!st.ok()) {
      st = st.WithContext(fmt::format("rank {}: {} seq {} on device buffers", host_.rank,
                                      CallName(task.call), task.seq));
      if (IsFatal(st)) hooks_.fail(st);
    }
  }
  // Always, so the caller's stream never waits forever (on error its output is undefined
  // and the communicator reports the error).
  path_->gate().Release(task.ticket);
  return st;
}

void DeviceCalls::StartPointToPoint(Task task, const Status& failure) {
  const Call& c = task.call;
  auto request = task.request;
  DevicePath* dev = path_.get();
  auto ticket = task.ticket;
  auto finish = [dev, request, ticket](Status st) {
    dev->gate().Release(ticket);
    request->Complete(std::move(st));
  };
  if (!failure.ok()) {
    finish(RefusedAfterFailure(host_.rank, c, failure));
    return;
  }
  Deadline deadline = CallDeadline(c);
  const size_t bytes = c.count * DataTypeSize(c.dtype);
  // Staged through host memory owned by the operation until it completes.
  auto staging = std::make_shared<std::vector<char>>(bytes);
  Status st = gpu::SetDevice(dev->device());
  if (st.ok()) st = dev->gate().WaitReady(ticket, deadline);
  if (st.ok() && c.kind == CallKind::kSend)
    st = dev->CopyToHost(staging->data(), c.send, bytes, deadline);
  if (!st.ok()) {
    st = st.WithContext(fmt::format("rank {}: {} to/from rank {} on device buffers", host_.rank,
                                    CallName(c), c.peer));
    hooks_.fail(st);
    finish(st);
    return;
  }
  if (c.kind == CallKind::kSend) {
    p2p_->PostSend(c.peer, task.seq, c.tag, c.dtype, staging->data(), bytes, deadline,
                   [finish, staging](Status s) { finish(std::move(s)); });
  } else {
    void* dst = c.recv;
    p2p_->PostRecv(c.peer, c.tag, c.dtype, staging->data(), bytes, deadline,
                   [finish, staging, dev, dst, bytes, deadline](Status s) {
                     if (s.ok()) s = dev->CopyFromHost(dst, staging->data(), bytes, deadline);
                     finish(std::move(s));
                   });
  }
}

}  // namespace weft::comm
