// The device seam: everything weft asks of an accelerator, behind one small interface, so
// the communicator's device orchestration runs unchanged on CUDA and on a CPU fake
// (gpu/fake_device.h) that proves it in CI on machines without a GPU.
//
// Streams are FIFO queues of device work; a call that takes a stream only enqueues and
// returns (it never waits for the stream), except SyncStream and the allocators. Flags
// are 32-bit words in pinned host memory (AllocPinned) that a stream can write after its
// earlier work and wait on before its later work; the host reads and writes them with
// plain atomic loads and stores, making no device call. That is how the communicator's
// worker learns that a caller's stream has reached an operation and lets the stream go
// on, without itself ever calling the device (NCCL's rule: every device call of an
// operation is made by the calling thread when the operation is issued).
//
// Thread-safety: every method may be called from any thread. A Device lives for the
// whole process (ActiveDevice never returns a different one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/deadline.h"
#include "core/status.h"
#include "core/types.h"

namespace weft::gpu {

using Stream = void*;  // cudaStream_t on CUDA; nullptr: the device's default stream
using Event = void*;

struct PointerInfo {
  bool device = false;  // device memory: only the device's copies and kernels can touch it
  int device_id = -1;
};

// A device allocation of one process made accessible in another on the same host (CUDA
// IPC, or the fake's memfd). Plain bytes, sent to peers as is.
struct IpcRef {
  uint8_t handle[64] = {};  // the allocation's handle (identifies its base)
  uint64_t offset = 0;      // of the exported pointer within the allocation
};

class Device {
 public:
  virtual ~Device() = default;

  // "cuda" or "fake".
  virtual const char* name() const = 0;

  // Device memory of this process (its own allocations or peers' opened by OpenIpc):
  // {true, id}; anything else (pageable, pinned or managed host memory, nullptr, an
  // unknown pointer): {false, -1}.
  virtual PointerInfo Classify(const void* p) = 0;
  // The device the calling thread uses, and making another current on it.
  virtual int CurrentDevice() = 0;
  virtual Status SetDevice(int device) = 0;
  // "0000:3b:00.0" on CUDA; unique per device on this host; "" on error.
  virtual std::string PciBusId(int device) = 0;
  // Whether the current device can read and write memory of the device with this bus
  // id (the same device, or a peer with peer access).
  virtual bool CanAccess(const std::string& pci_bus_id) = 0;

  // A stream on the current device, not synchronising with the default stream.
  virtual Result<Stream> CreateStream() = 0;
  virtual void DestroyStream(Stream stream) = 0;
  // Copies `bytes` once the stream reaches the copy: any direction, host memory
  // pageable or pinned. dst == src or bytes == 0: nothing.
  virtual Status CopyAsync(void* dst, const void* src, size_t bytes, Stream stream) = 0;
  // out[i] = in[0][i] op ... op in[n-1][i] (avg: the sum divided by `divisor` once, at
  // the end), any n >= 1. `out` may be exactly any in[r]; no partial overlap. Every
  // pointer must be device-accessible from the current device.
  virtual Status ReduceAsync(void* out, const void* const* in, int n, size_t count,
                             DataType dtype, RedOp op, int divisor, Stream stream) = 0;
  // Holds the stream for `microseconds` (a spinning kernel on CUDA): for tests and the
  // device check, which need a stream that is busy for a known time.
  virtual Status DelayAsync(int64_t microseconds, Stream stream) = 0;

  // Once the stream's earlier work has finished, *flag = value (with that work's
  // results visible to the host first). `flag` lies in AllocPinned memory.
  virtual Status WriteFlagAsync(uint32_t* flag, uint32_t value, Stream stream) = 0;
  // The stream's later work waits until *flag >= value, compared as unsigned.
  virtual Status WaitFlagAsync(uint32_t* flag, uint32_t value, Stream stream) = 0;

  virtual Result<Event> CreateEvent() = 0;
  virtual void DestroyEvent(Event event) = 0;
  // The event completes when the stream's work enqueued before it has finished.
  virtual Status RecordEvent(Event event, Stream stream) = 0;
  // Whether the event's last recording has completed (true for one never recorded).
  virtual Result<bool> QueryEvent(Event event) = 0;
  // The stream's later work waits for the event's last recording.
  virtual Status StreamWaitEvent(Stream stream, Event event) = 0;

  // Waits for everything enqueued on `stream` so far, bounded by `deadline`.
  virtual Status SyncStream(Stream stream, const Deadline& deadline) = 0;

  // Device memory on the current device, and page-locked host memory that every device
  // can read and write (flags live in it). Freeing may wait for the whole device.
  virtual Result<void*> AllocDevice(size_t bytes) = 0;
  virtual void FreeDevice(void* p) = 0;
  virtual Result<void*> AllocPinned(size_t bytes) = 0;
  virtual void FreePinned(void* p) = 0;

  // Unavailable where the memory cannot be shared (not a device allocation of this
  // process, or one the device cannot export).
  virtual Result<IpcRef> ExportIpc(const void* device_ptr) = 0;
  // The allocation's base, mapped into this process (add ref.offset for the pointer);
  // each Open is undone by one CloseIpc of the base it returned.
  virtual Result<void*> OpenIpc(const IpcRef& ref) = 0;
  virtual void CloseIpc(void* base) = 0;
};

// The device weft uses in this process, decided once: the CPU fake when WEFT_FAKE_DEVICE
// is set (gpu/fake_device.h), else CUDA where it is built, not switched off by
// WEFT_CUDA=0 and a device is visible; else nullptr, and NoDeviceReason() says why.
Device* ActiveDevice();
std::string NoDeviceReason();

}  // namespace weft::gpu
