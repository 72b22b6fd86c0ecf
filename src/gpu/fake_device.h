// A CPU fake of the device seam (gpu/device.h), so the device orchestration is proven
// in CI on machines without a GPU. Active in a process where WEFT_FAKE_DEVICE=1.
//
// - Each stream is a thread running its work in FIFO order; the default stream (nullptr)
//   is one more such stream per device.
// - Device memory is a memfd mapped twice: the address handed out is PROT_NONE, so a host
//   access to it (a bug: only copies and reductions may touch device memory) faults at
//   once; the stream threads work on a second, writable mapping. Another process opens it
//   through /proc/<pid>/fd/<fd> (the fake's IPC).
// - Flags are atomics in host memory; events count recordings and completions.
// - Every call is logged with the thread that made it (Log), so a test can prove which
//   thread touches the device; WEFT_FAKE_COPY_GBPS slows copies to a given rate and
//   DelayAsync holds a stream, so tests can make device work slow on purpose.
// - WEFT_FAKE_DEVICES (default 1) devices, all reachable from each other, with bus ids
//   "fake:00", "fake:01", ... ; the calling thread's current device starts at 0.
// Reductions fold their inputs in the kernel's batches (gpu/reduce_batches.h) with the
// host reference of the kernel's arithmetic, so the fake computes what the device does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "gpu/device.h"

namespace weft::gpu {

class FakeDevice final : public Device {
 public:
  struct Options {
    int devices = 1;
    double copy_gbytes_per_s = 0;  // 0: copies as fast as memcpy
  };
  // WEFT_FAKE_DEVICES, WEFT_FAKE_COPY_GBPS; InvalidArgument naming a bad value.
  static Result<Options> OptionsFromEnv();

  explicit FakeDevice(Options options);
  ~FakeDevice() override;

  const char* name() const override { return "fake"; }
  PointerInfo Classify(const void* p) override;
  int CurrentDevice() override;
  Status SetDevice(int device) override;
  std::string PciBusId(int device) override;
  bool CanAccess(const std::string& pci_bus_id) override;
  Result<Stream> CreateStream() override;
  void DestroyStream(Stream stream) override;
  Status CopyAsync(void* dst, const void* src, size_t bytes, Stream stream) override;
  Status ReduceAsync(void* out, const void* const* in, int n, size_t count, DataType dtype,
                     RedOp op, int divisor, Stream stream) override;
  Status DelayAsync(int64_t microseconds, Stream stream) override;
  Status WriteFlagAsync(uint32_t* flag, uint32_t value, Stream stream) override;
  Status WaitFlagAsync(uint32_t* flag, uint32_t value, Stream stream) override;
  Result<Event> CreateEvent() override;
  void DestroyEvent(Event event) override;
  Status RecordEvent(Event event, Stream stream) override;
  Result<bool> QueryEvent(Event event) override;
  Status StreamWaitEvent(Stream stream, Event event) override;
  Status SyncStream(Stream stream, const Deadline& deadline) override;
  Result<void*> AllocDevice(size_t bytes) override;
  void FreeDevice(void* p) override;
  Result<void*> AllocPinned(size_t bytes) override;
  void FreePinned(void* p) override;
  Result<IpcRef> ExportIpc(const void* device_ptr) override;
  Result<void*> OpenIpc(const IpcRef& ref) override;
  void CloseIpc(void* base) override;

  // For tests: copies between host memory and device memory synchronously (the host
  // itself cannot touch device memory).
  Status Read(void* host, const void* device_ptr, size_t bytes);
  Status Write(void* device_ptr, const void* host, size_t bytes);

  struct LogEntry {
    std::string call;  // the method, e.g. "CopyAsync"
    std::thread::id thread;
  };
  // The calls made since the last TakeLog, in order.
  std::vector<LogEntry> TakeLog() EXCLUDES(log_mu_);

 private:
  struct FakeStream;
  struct Allocation {
    size_t bytes = 0;  // mapped (page-rounded)
    char* shadow = nullptr;  // the writable mapping the streams use
    int device = 0;
    int fd = -1;
    bool opened = false;  // a peer's, mapped by OpenIpc
    int opens = 0;        // same-process OpenIpc calls not yet closed
    uint64_t id = 0;      // unique per allocation of the exporting process (IPC keys)
  };

  void Log(const char* call) EXCLUDES(log_mu_);
  FakeStream* StreamFor(Stream stream) EXCLUDES(mu_);
  // The writable address of [p, p + bytes) if it is device memory, else p itself;
  // nullptr if it runs past its allocation.
  char* Translate(const void* p, size_t bytes) EXCLUDES(mu_);
  bool DeviceAccessible(const void* p) EXCLUDES(mu_);
  Result<void*> Map(int fd, size_t bytes, int device, uint64_t id, bool opened) EXCLUDES(mu_);

  const Options options_;
  Mutex mu_;
  std::map<uintptr_t, Allocation> allocs_ GUARDED_BY(mu_);  // by user-visible base
  std::map<uintptr_t, size_t> pinned_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::vector<FakeStream*> default_streams_ GUARDED_BY(mu_);  // per device, made on use
  // Every stream alive (created and default ones), for FreePinned's implicit sync. Its own
  // lock: FreePinned waits on streams while holding it, and their work may take mu_.
  Mutex streams_mu_;
  std::set<FakeStream*> live_streams_ GUARDED_BY(streams_mu_);
  Mutex log_mu_;
  std::vector<LogEntry> log_ GUARDED_BY(log_mu_);
};

// The process's fake when WEFT_FAKE_DEVICE=1 made it the active device, else nullptr.
FakeDevice* ActiveFake();

}  // namespace weft::gpu
