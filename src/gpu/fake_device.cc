#include "gpu/fake_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>

#include <fmt/format.h>

#include "core/env.h"
#include "gpu/reduce_math.h"

namespace weft::gpu {
namespace {

thread_local int t_device = 0;

size_t PageRound(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return std::max(page, (bytes + page - 1) / page * page);
}

// An event: recordings counted on the host, completions by the streams. Both seq_cst:
// the stream's store of `completed` (after its earlier work) pairs with the load in
// QueryEvent and StreamWaitEvent, so a completed event publishes that work.
struct FakeEvent {
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> completed{0};
};

// What IpcRef.handle holds for the fake.
struct FakeHandle {
  uint32_t magic = kMagic;
  int32_t pid = 0;
  int32_t fd = -1;
  int32_t device = 0;
  uint64_t bytes = 0;
  uint64_t id = 0;
  static constexpr uint32_t kMagic = 0x46414b45;  // "FAKE"
};
static_assert(sizeof(FakeHandle) <= sizeof(IpcRef::handle));

void Pause() { std::this_thread::sleep_for(std::chrono::microseconds(20)); }

}  // namespace

// A FIFO of work run by its own thread, as a device runs a stream's work in order.
struct FakeDevice::FakeStream {
  explicit FakeStream(int dev) : device(dev), thread([this] { Loop(); }) {}
  ~FakeStream() {
    {
      MutexLock lock(&mu);
      stopping = true;
      cv.NotifyAll();
    }
    thread.join();
  }
  void Enqueue(std::function<void()> op) EXCLUDES(mu) {
    MutexLock lock(&mu);
    ops.push_back(std::move(op));
    ++enqueued;
    cv.NotifyAll();
  }
  // Waits until the work enqueued so far has run, or `deadline`.
  Status Sync(const Deadline& deadline) EXCLUDES(mu) {
    MutexLock lock(&mu);
    const uint64_t target = enqueued;
    while (done < target) {
      if (!cv.WaitUntil(&mu, deadline.at()) && done < target)
        return DeadlineExceeded("fake device: the stream's work did not finish in time");
    }
    return Status::Ok();
  }
  bool Stopping() EXCLUDES(mu) {
    MutexLock lock(&mu);
    return stopping;
  }
  void Loop() EXCLUDES(mu) {
    MutexLock lock(&mu);
    while (true) {
      while (ops.empty() && !stopping) cv.Wait(&mu);
      if (ops.empty()) return;  // stopping, and everything enqueued has run
      std::function<void()> op = std::move(ops.front());
      ops.pop_front();
      lock.Unlock();
      op();
      lock.Lock();
      ++done;
      cv.NotifyAll();
    }
  }

  const int device;
  Mutex mu;
  CondVar cv;
  std::deque<std::function<void()>> ops GUARDED_BY(mu);
  uint64_t enqueued GUARDED_BY(mu) = 0;
  uint64_t done GUARDED_BY(mu) = 0;
  bool stopping GUARDED_BY(mu) = false;
  std::thread thread;  // last: starts once the rest is built
};

Result<FakeDevice::Options> FakeDevice::OptionsFromEnv() {
  Options o;
  WEFT_ASSIGN_OR_RETURN(long long devices, GetEnvInt("WEFT_FAKE_DEVICES", 1));
  if (devices < 1 || devices > 64)
    return InvalidArgument(fmt::format("WEFT_FAKE_DEVICES={}: expected 1 to 64", devices));
  o.devices = static_cast<int>(devices);
  WEFT_ASSIGN_OR_RETURN(o.copy_gbytes_per_s, GetEnvDouble("WEFT_FAKE_COPY_GBPS", 0));
  if (o.copy_gbytes_per_s < 0)
    return InvalidArgument(
        fmt::format("WEFT_FAKE_COPY_GBPS={}: expected GB/s >= 0 (0: no limit)",
                    o.copy_gbytes_per_s));
  return o;
}

FakeDevice::FakeDevice(Options options) : options_(options) {
  MutexLock lock(&mu_);
  default_streams_.assign(options_.devices, nullptr);
}

FakeDevice::~FakeDevice() {
  std::vector<FakeStream*> streams;
  std::map<uintptr_t, Allocation> allocs;
  std::map<uintptr_t, size_t> pinned;
  {
    MutexLock lock(&mu_);
    streams.swap(default_streams_);
  }
  {
    MutexLock lock(&streams_mu_);
    for (FakeStream* s : streams) live_streams_.erase(s);
  }
  for (FakeStream* s : streams) delete s;  // their work done first
  {
    MutexLock lock(&mu_);
    allocs.swap(allocs_);
    pinned.swap(pinned_);
  }
  // What is still allocated goes with the device, as a process's memory with its context.
  for (auto& [base, a] : allocs) {
    munmap(reinterpret_cast<void*>(base), a.bytes);
    munmap(a.shadow, a.bytes);
    close(a.fd);
  }
  for (auto& [p, bytes] : pinned) std::free(reinterpret_cast<void*>(p));
}

void FakeDevice::Log(const char* call) {
  MutexLock lock(&log_mu_);
  log_.push_back({call, std::this_thread::get_id()});
}

std::vector<FakeDevice::LogEntry> FakeDevice::TakeLog() {
  MutexLock lock(&log_mu_);
  std::vector<LogEntry> out;
  out.swap(log_);
  return out;
}

FakeDevice::FakeStream* FakeDevice::StreamFor(Stream stream) {
  if (stream != nullptr) return static_cast<FakeStream*>(stream);
  MutexLock lock(&mu_);
  FakeStream*& s = default_streams_[t_device];
  if (s == nullptr) {
    s = new FakeStream(t_device);
    MutexLock streams_lock(&streams_mu_);
    live_streams_.insert(s);
  }
  return s;
}

PointerInfo FakeDevice::Classify(const void* p) {
  Log("Classify");
  const auto at = reinterpret_cast<uintptr_t>(p);
  MutexLock lock(&mu_);
  auto it = allocs_.upper_bound(at);
  if (p == nullptr || it == allocs_.begin()) return {};
  --it;
  if (at >= it->first + it->second.bytes) return {};
  return {true, it->second.device};
}

char* FakeDevice::Translate(const void* p, size_t bytes) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  MutexLock lock(&mu_);
  auto it = allocs_.upper_bound(at);
  if (it == allocs_.begin()) return static_cast<char*>(const_cast<void*>(p));
  --it;
  if (at >= it->first + it->second.bytes) return static_cast<char*>(const_cast<void*>(p));
  if (at + bytes > it->first + it->second.bytes) return nullptr;
  return it->second.shadow + (at - it->first);
}

bool FakeDevice::DeviceAccessible(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  MutexLock lock(&mu_);
  auto pin = pinned_.upper_bound(at);
  if (pin != pinned_.begin() && at < std::prev(pin)->first + std::prev(pin)->second) return true;
  auto it = allocs_.upper_bound(at);
  return it != allocs_.begin() && at < std::prev(it)->first + std::prev(it)->second.bytes;
}

int FakeDevice::CurrentDevice() {
  Log("CurrentDevice");
  return t_device;
}

Status FakeDevice::SetDevice(int device) {
  Log("SetDevice");
  if (device < 0 || device >= options_.devices)
    return InvalidArgument(fmt::format("fake device: no device {} (WEFT_FAKE_DEVICES={})", device,
                                       options_.devices));
  t_device = device;
  return Status::Ok();
}

std::string FakeDevice::PciBusId(int device) {
  Log("PciBusId");
  if (device < 0 || device >= options_.devices) return "";
  return fmt::format("fake:{:02x}", device);
}

bool FakeDevice::CanAccess(const std::string& pci_bus_id) {
  Log("CanAccess");
  for (int d = 0; d < options_.devices; ++d)
    if (pci_bus_id == fmt::format("fake:{:02x}", d)) return true;
  return false;
}

Result<Stream> FakeDevice::CreateStream() {
  Log("CreateStream");
  auto* s = new FakeStream(t_device);
  MutexLock lock(&streams_mu_);
  live_streams_.insert(s);
  return static_cast<Stream>(s);
}

void FakeDevice::DestroyStream(Stream stream) {
  Log("DestroyStream");
  auto* s = static_cast<FakeStream*>(stream);
  {
    MutexLock lock(&streams_mu_);  // not while FreePinned waits on it
    live_streams_.erase(s);
  }
  delete s;  // runs what is enqueued first
}

Status FakeDevice::CopyAsync(void* dst, const void* src, size_t bytes, Stream stream) {
  Log("CopyAsync");
  if (bytes == 0 || dst == src) return Status::Ok();
  char* d = Translate(dst, bytes);
  const char* s = Translate(src, bytes);
  if (d == nullptr || s == nullptr)
    return InvalidArgument(fmt::format("fake device: a copy of {} bytes runs past the end of "
                                       "its device allocation", bytes));
  const double rate = options_.copy_gbytes_per_s;
  StreamFor(stream)->Enqueue([d, s, bytes, rate] {
    const auto start = std::chrono::steady_clock::now();
    std::memmove(d, s, bytes);
    if (rate > 0)
      std::this_thread::sleep_until(
          start + std::chrono::nanoseconds(static_cast<int64_t>(bytes / rate)));
  });
  return Status::Ok();
}

Status FakeDevice::ReduceAsync(void* out, const void* const* in, int n, size_t count,
                               DataType dtype, RedOp op, int divisor, Stream stream) {
  Log("ReduceAsync");
  if (count == 0) return Status::Ok();
  if (n < 1 || in == nullptr) return InvalidArgument("ReduceAsync: no inputs");
  const size_t bytes = count * DataTypeSize(dtype);
  // A kernel reads device memory (its own or a peer's) and pinned host memory only.
  auto reachable = [&](const void* p, const char* what) -> Result<char*> {
    if (!DeviceAccessible(p))
      return InvalidArgument(fmt::format("fake device: ReduceAsync's {} ({}) is pageable host "
                                         "memory, which a kernel cannot read", what, p));
    char* t = Translate(p, bytes);
    if (t == nullptr)
      return InvalidArgument(fmt::format("fake device: ReduceAsync's {} runs past its end", what));
    return t;
  };
  // Translation maps one allocation to one shadow, so an in-place output still equals
  // its input afterwards and the batches come out as the kernel's.
  std::vector<const void*> ins(n);
  for (int r = 0; r < n; ++r) {
    WEFT_ASSIGN_OR_RETURN(ins[r], reachable(in[r], "input"));
  }
  WEFT_ASSIGN_OR_RETURN(char* o, reachable(out, "output"));
  StreamFor(stream)->Enqueue([o, ins, n, count, dtype, op, divisor] {
    ReduceBatchedHost(o, ins.data(), n, count, dtype, op, divisor);
  });
  return Status::Ok();
}

Status FakeDevice::DelayAsync(int64_t microseconds, Stream stream) {
  Log("DelayAsync");
  StreamFor(stream)->Enqueue(
      [microseconds] { std::this_thread::sleep_for(std::chrono::microseconds(microseconds)); });
  return Status::Ok();
}

Status FakeDevice::WriteFlagAsync(uint32_t* flag, uint32_t value, Stream stream) {
  Log("WriteFlagAsync");
  // Release: pairs with the acquire of the flag (comm::StreamStaging's Load, WaitFlagAsync
  // below); publishes this stream's earlier work, as the device's write does.
  StreamFor(stream)->Enqueue(
      [flag, value] { std::atomic_ref<uint32_t>(*flag).store(value, std::memory_order_release); });
  return Status::Ok();
}

Status FakeDevice::WaitFlagAsync(uint32_t* flag, uint32_t value, Stream stream) {
  Log("WaitFlagAsync");
  FakeStream* s = StreamFor(stream);
  s->Enqueue([flag, value, s] {
    // Unsigned >=, as cuStreamWaitValue32's GEQ. A stream being destroyed gives up.
    // Acquire: pairs with the release in StreamGate::Release, StreamStaging::RunHost and
    // WriteFlagAsync; the host's (or other stream's) writes before it are visible after.
    while (std::atomic_ref<uint32_t>(*flag).load(std::memory_order_acquire) < value &&
           !s->Stopping())
      Pause();
  });
  return Status::Ok();
}

Result<Event> FakeDevice::CreateEvent() {
  Log("CreateEvent");
  return static_cast<Event>(new FakeEvent());
}

void FakeDevice::DestroyEvent(Event event) {
  Log("DestroyEvent");
  delete static_cast<FakeEvent*>(event);
}

Status FakeDevice::RecordEvent(Event event, Stream stream) {
  Log("RecordEvent");
  auto* e = static_cast<FakeEvent*>(event);
  const uint64_t gen = e->recorded.fetch_add(1) + 1;
  StreamFor(stream)->Enqueue([e, gen] {
    uint64_t seen = e->completed.load();
    while (seen < gen && !e->completed.compare_exchange_weak(seen, gen)) continue;
  });
  return Status::Ok();
}

Result<bool> FakeDevice::QueryEvent(Event event) {
  Log("QueryEvent");
  auto* e = static_cast<FakeEvent*>(event);
  return e->completed.load() >= e->recorded.load();
}

Status FakeDevice::StreamWaitEvent(Stream stream, Event event) {
  Log("StreamWaitEvent");
  auto* e = static_cast<FakeEvent*>(event);
  const uint64_t target = e->recorded.load();
  FakeStream* s = StreamFor(stream);
  s->Enqueue([e, target, s] {
    while (e->completed.load() < target && !s->Stopping()) Pause();
  });
  return Status::Ok();
}

Status FakeDevice::SyncStream(Stream stream, const Deadline& deadline) {
  Log("SyncStream");
  return StreamFor(stream)->Sync(deadline);
}

Result<void*> FakeDevice::Map(int fd, size_t bytes, int device, uint64_t id, bool opened) {
  void* user = mmap(nullptr, bytes, PROT_NONE, MAP_SHARED, fd, 0);
  if (user == MAP_FAILED) return ErrnoStatus("fake device: mmap", errno);
  void* shadow = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (shadow == MAP_FAILED) {
    munmap(user, bytes);
    return ErrnoStatus("fake device: mmap", errno);
  }
  MutexLock lock(&mu_);
  Allocation a;
  a.bytes = bytes;
  a.shadow = static_cast<char*>(shadow);
  a.device = device;
  a.fd = fd;
  a.opened = opened;
  a.id = id != 0 ? id : next_id_++;
  allocs_[reinterpret_cast<uintptr_t>(user)] = a;
  return user;
}

Result<void*> FakeDevice::AllocDevice(size_t bytes) {
  Log("AllocDevice");
  const size_t mapped = PageRound(bytes);
  int fd = memfd_create("weft-fake-device", MFD_CLOEXEC);
  if (fd < 0) return ErrnoStatus("fake device: memfd_create", errno);
  if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
    close(fd);
    return ErrnoStatus("fake device: ftruncate", errno);
  }
  auto p = Map(fd, mapped, t_device, 0, false);
  if (!p.ok()) close(fd);
  return p;
}

void FakeDevice::FreeDevice(void* p) {
  Log("FreeDevice");
  Allocation a;
  {
    MutexLock lock(&mu_);
    auto it = allocs_.find(reinterpret_cast<uintptr_t>(p));
    if (it == allocs_.end() || it->second.opened) return;
    a = it->second;
    allocs_.erase(it);
  }
  munmap(p, a.bytes);
  munmap(a.shadow, a.bytes);
  close(a.fd);
}

Result<void*> FakeDevice::AllocPinned(size_t bytes) {
  Log("AllocPinned");
  const size_t n = std::max<size_t>(bytes, 64);
  void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
  if (p == nullptr) return ErrnoStatus("fake device: pinned allocation", ENOMEM);
  std::memset(p, 0, n);
  MutexLock lock(&mu_);
  pinned_[reinterpret_cast<uintptr_t>(p)] = n;
  return p;
}

// cudaFreeHost synchronizes with the device: copies already queued from or to the block
// finish before it is freed. The fake waits for every stream likewise (bounded: a stream
// still parked on a flag no one will write must not hang the caller).
void FakeDevice::FreePinned(void* p) {
  Log("FreePinned");
  {
    MutexLock lock(&mu_);
    pinned_.erase(reinterpret_cast<uintptr_t>(p));
  }
  {
    MutexLock lock(&streams_mu_);
    const Deadline deadline = Deadline::AfterSeconds(10);
    for (FakeStream* s : live_streams_) (void)s->Sync(deadline);
  }
  std::free(p);
}

Result<IpcRef> FakeDevice::ExportIpc(const void* device_ptr) {
  Log("ExportIpc");
  const auto at = reinterpret_cast<uintptr_t>(device_ptr);
  MutexLock lock(&mu_);
  auto it = allocs_.upper_bound(at);
  if (it == allocs_.begin() || at >= std::prev(it)->first + std::prev(it)->second.bytes)
    return Unavailable(fmt::format("fake device: {} is not device memory", device_ptr));
  --it;
  FakeHandle h;
  h.pid = static_cast<int32_t>(getpid());
  h.fd = it->second.fd;
  h.device = it->second.device;
  h.bytes = it->second.bytes;
  h.id = it->second.id;
  IpcRef ref;
  std::memcpy(ref.handle, &h, sizeof(h));
  ref.offset = at - it->first;
  return ref;
}

Result<void*> FakeDevice::OpenIpc(const IpcRef& ref) {
  Log("OpenIpc");
  FakeHandle h;
  std::memcpy(&h, ref.handle, sizeof(h));
  if (h.magic != FakeHandle::kMagic) return InvalidArgument("fake device: not a fake IPC handle");
  if (h.pid == static_cast<int32_t>(getpid())) {
    // This process's own allocation: its base, as it is.
    MutexLock lock(&mu_);
    for (auto& [base, a] : allocs_)
      if (a.id == h.id && !a.opened) {
        ++a.opens;
        return reinterpret_cast<void*>(base);
      }
    return Unavailable("fake device: the exported allocation was freed");
  }
  int fd = open(fmt::format("/proc/{}/fd/{}", h.pid, h.fd).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return Unavailable(fmt::format("fake device: opening process {}'s allocation: {}", h.pid,
                                   std::strerror(errno)));
  auto p = Map(fd, h.bytes, h.device, h.id, true);
  if (!p.ok()) close(fd);
  return p;
}

void FakeDevice::CloseIpc(void* base) {
  Log("CloseIpc");
  Allocation a;
  {
    MutexLock lock(&mu_);
    auto it = allocs_.find(reinterpret_cast<uintptr_t>(base));
    if (it == allocs_.end()) return;
    if (!it->second.opened) {
      --it->second.opens;
      return;
    }
    a = it->second;
    allocs_.erase(it);
  }
  munmap(base, a.bytes);
  munmap(a.shadow, a.bytes);
  close(a.fd);
}

Status FakeDevice::Read(void* host, const void* device_ptr, size_t bytes) {
  const char* s = Translate(device_ptr, bytes);
  if (s == nullptr) return InvalidArgument("fake device: Read past the allocation's end");
  std::memcpy(host, s, bytes);
  return Status::Ok();
}

Status FakeDevice::Write(void* device_ptr, const void* host, size_t bytes) {
  char* d = Translate(device_ptr, bytes);
  if (d == nullptr) return InvalidArgument("fake device: Write past the allocation's end");
  std::memcpy(d, host, bytes);
  return Status::Ok();
}

}  // namespace weft::gpu
