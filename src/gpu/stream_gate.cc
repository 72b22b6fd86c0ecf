#include "gpu/stream_gate.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "core/env.h"
#include "gpu/device.h"
#include "gpu/runtime.h"

namespace weft::gpu {
namespace {

// WEFT_CUDA_STREAM_WAIT: sync (the default) or memop.
//
// Why not memop by default on CUDA: on an H200 (driver 580), with ranks as processes
// sharing the GPU, the multi-rank check hung with the caller's stream parked on the
// flag: when the caller then blocked in the driver (a copy into pageable memory: both
// paths; in cudaStreamSynchronize: the direct path, whose worker opens CUDA IPC handles)
// while the worker still had CUDA calls to make for the collective. The gate test (one
// thread, no such call) passed. Until the device work is enqueued on the caller's stream
// at call time (NCCL's design), stream calls are synchronous (docs/GPU.md).
Result<bool> MemopFromEnv() {
  std::string mode = GetEnv("WEFT_CUDA_STREAM_WAIT").value_or("sync");
  if (mode == "sync") return false;
  if (mode == "memop") return true;
  return InvalidArgument(fmt::format("WEFT_CUDA_STREAM_WAIT='{}': expected sync or memop", mode));
}

}  // namespace

Result<std::unique_ptr<StreamGate>> StreamGate::Create() {
  Device* d = ActiveDevice();
  if (d == nullptr) return InvalidArgument(NoDeviceReason());
  std::unique_ptr<StreamGate> gate(new StreamGate());
  gate->device_ = d;
  WEFT_ASSIGN_OR_RETURN(gate->memop_, MemopFromEnv());
  WEFT_ASSIGN_OR_RETURN(void* p, d->AllocPinned(kSlots * sizeof(uint32_t)));
  gate->flags_ = static_cast<uint32_t*>(p);
  for (uint32_t i = 0; i < kSlots; ++i) gate->flags_[i] = 0;
  return gate;
}

StreamGate::~StreamGate() {
  // A stream may not have reached a released wait yet (it is still busy with earlier
  // work) and would then read freed memory. Once any ticket was issued the 16 KiB of
  // flags are therefore left allocated (once per communicator that used a stream).
  if (flags_ != nullptr && issued_ == 0) device_->FreePinned(flags_);
}

const char* StreamGate::mechanism() const {
  return memop_ ? "stream memory operation" : "synchronous call";
}

Result<StreamGate::Ticket> StreamGate::Begin(void* stream) {
  // A count only (seq_cst, more than needed): the slot's flag, not this, orders the
  // stream's wait, and a reused slot's generation is newer than any stale wait.
  if (issued_ - std::atomic_ref<uint64_t>(released_).load() >= kSlots - 1)
    return Unavailable(fmt::format("more than {} device operations in flight", kSlots - 1));
  Ticket t;
  const uint64_t n = issued_;
  t.slot = static_cast<uint32_t>(n % kSlots);
  t.value = static_cast<uint32_t>(n / kSlots) + 1;  // the slot's generation
  WEFT_ASSIGN_OR_RETURN(Event ev, device_->CreateEvent());
  Status st = device_->RecordEvent(ev, stream);
  if (!st.ok()) {
    device_->DestroyEvent(ev);
    return st.WithContext("recording an event on the caller's stream");
  }
  if (memop_) {
    st = device_->WaitFlagAsync(flags_ + t.slot, t.value, stream);
    if (!st.ok()) {
      device_->DestroyEvent(ev);
      return st.WithContext("unset WEFT_CUDA_STREAM_WAIT to make stream calls synchronous");
    }
  }
  ++issued_;
  t.ready = ev;
  return t;
}

Status StreamGate::WaitReady(const Ticket& t, const Deadline& deadline) {
  int spins = 0;
  while (true) {
    WEFT_ASSIGN_OR_RETURN(bool done, device_->QueryEvent(t.ready));
    if (done) return Status::Ok();
    if (deadline.expired())
      return DeadlineExceeded(
          "the caller's stream did not reach the operation in time (work queued before it "
          "on the stream is still running)");
    if (++spins < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

StreamGate::Ticket StreamGate::Share(Ticket& t) {
  if (!t.holders) t.holders = std::make_shared<std::atomic<int>>(1);
  t.holders->fetch_add(1);
  return t;
}

void StreamGate::Release(const Ticket& t) {
  // acq_rel: the last holder sees the others' host work before it lets the stream go.
  if (t.holders && t.holders->fetch_sub(1, std::memory_order_acq_rel) > 1) return;
  // Release: pairs with the stream's acquire wait (Device::WaitFlagAsync; the fake's
  // acquire load); publishes the host work done for the ticket.
  std::atomic_ref<uint32_t>(flags_[t.slot]).store(t.value, std::memory_order_release);
  std::atomic_ref<uint64_t>(released_).fetch_add(1);
  if (t.ready != nullptr) device_->DestroyEvent(t.ready);
}

}  // namespace weft::gpu
