#include "shared_memory.h"

#include <c10/core/CPUAllocator.h>
#include <weft/weft.h>

#include <atomic>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend.h"

namespace weft_torch {

at::Tensor EmptyShared(const std::vector<int64_t>& sizes, at::ScalarType dtype) {
  const size_t elem = c10::elementSize(dtype);
  size_t bytes = elem;
  for (int64_t s : sizes) {
    if (s < 0) {
      throw std::invalid_argument("weft.torch.empty: negative size " + std::to_string(s));
    }
    if (s != 0 && bytes > std::numeric_limits<size_t>::max() / static_cast<size_t>(s)) {
      throw std::invalid_argument("weft.torch.empty: the tensor's size overflows");
    }
    bytes *= static_cast<size_t>(s);
  }
  // weftMemAlloc refuses 0 bytes; an empty tensor still gets a (one-element) buffer.
  void* ptr = nullptr;
  if (weftMemAlloc(&ptr, bytes == 0 ? elem : bytes) != weftSuccess) {
    throw std::runtime_error(std::string("weft.torch.empty: ") + weftGetLastError(nullptr));
  }
  return at::from_blob(
      ptr, sizes, [](void* p) { weftMemFree(p); },
      at::TensorOptions().dtype(dtype).device(at::kCPU));
}

namespace {

// Freed buffers are kept for reuse, as torch's own allocators do: a training step
// allocates the same sizes every time (activations, gradients), and a fresh weftMemAlloc
// buffer costs a memfd and the kernel zeroing every page on first touch, which made a
// DDP step 1.34x slower with every allocation from 64 KiB fresh (bench/ddp_memory, 2048
// wide). Sizes are rounded to pages and matched exactly; at most kMaxCachedBytes wait.
constexpr size_t kPage = 4096;
constexpr size_t kMaxCachedBytes = size_t{1} << 30;

class BufferCache {
 public:
  // A cached buffer of exactly `bytes` (a multiple of kPage), or a new one; nullptr when
  // weftMemAlloc fails.
  void* Take(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(bytes);
      if (it != free_.end()) {
        void* ptr = it->second;
        free_.erase(it);
        cached_bytes_ -= bytes;
        live_[ptr] = bytes;
        return ptr;
      }
    }
    void* ptr = nullptr;
    if (weftMemAlloc(&ptr, bytes) != weftSuccess) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    live_[ptr] = bytes;
    return ptr;
  }
  // Keeps `ptr` for reuse; past the cap, frees the largest kept buffers (`ptr` may be one).
  void Give(void* ptr) {
    std::vector<void*> release;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = live_.find(ptr);
      const size_t bytes = it->second;
      live_.erase(it);
      free_.emplace(bytes, ptr);
      cached_bytes_ += bytes;
      while (cached_bytes_ > kMaxCachedBytes && !free_.empty()) {
        auto largest = std::prev(free_.end());
        cached_bytes_ -= largest->first;
        release.push_back(largest->second);
        free_.erase(largest);
      }
    }
    for (void* p : release) weftMemFree(p);
  }

 private:
  std::mutex mu_;
  std::unordered_map<void*, size_t> live_;  // (mu_) handed out: their sizes
  std::multimap<size_t, void*> free_;       // (mu_) kept for reuse, by size
  size_t cached_bytes_ = 0;                 // (mu_) the sum of free_'s sizes
};

// Never destroyed: tensors from it may be freed during interpreter shutdown.
BufferCache& Cache() {
  static auto* cache = new BufferCache;
  return *cache;
}

void GiveBack(void* ptr) { Cache().Give(ptr); }

// Never destroyed: tensors it allocated may be freed during interpreter shutdown, and
// torch keeps a raw pointer to it.
class SharedCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    const size_t min_bytes = min_bytes_.load(std::memory_order_relaxed);
    if (min_bytes > 0 && n >= min_bytes && n <= std::numeric_limits<size_t>::max() - kPage) {
      if (void* ptr = Cache().Take((n + kPage - 1) / kPage * kPage)) {
        return {ptr, ptr, &GiveBack, c10::Device(c10::DeviceType::CPU)};
      }
      // Out of file descriptors or memory for a memfd: the tensor still works, in private
      // memory, and collectives on it take the plain path (weft logs it at INFO).
      TORCH_WARN_ONCE("weft.torch.use_shared_memory: weftMemAlloc of ", n,
                      " bytes failed, so this and later failing allocations use torch's "
                      "allocator: ", weftGetLastError(nullptr));
    }
    return fallback_->allocate(n);
  }
  void copy_data(void* dest, const void* src, size_t count) const override {
    default_copy_data(dest, src, count);
  }

  c10::Allocator* fallback_ = nullptr;  // set before installation, never changed after
  std::atomic<size_t> min_bytes_{0};
};

std::mutex install_mu;
SharedCpuAllocator* installed = nullptr;  // (install_mu) non-null once first installed
bool active = false;                      // (install_mu) torch's CPU allocator now

}  // namespace

void UseSharedCpuAllocator(size_t min_bytes) {
  if (min_bytes == 0) {
    throw std::invalid_argument(
        "weft.torch.use_shared_memory: min_bytes must be at least 1 (weftMemAlloc refuses "
        "empty buffers)");
  }
  std::lock_guard<std::mutex> lock(install_mu);
  if (installed == nullptr) {
    installed = new SharedCpuAllocator;
    installed->fallback_ = c10::GetCPUAllocator();
  }
  installed->min_bytes_.store(min_bytes, std::memory_order_relaxed);
  if (!active) {
    c10::SetCPUAllocator(installed, /*priority=*/0);
    if (c10::GetCPUAllocator() != installed) {
      throw std::runtime_error(
          "weft.torch.use_shared_memory: torch kept its CPU allocator (another one was set "
          "with a higher priority)");
    }
    active = true;
  }
}

void UseDefaultCpuAllocator() {
  std::lock_guard<std::mutex> lock(install_mu);
  if (!active) return;
  c10::SetCPUAllocator(installed->fallback_, /*priority=*/0);
  active = false;
}

size_t SharedCpuAllocatorMinBytes() {
  std::lock_guard<std::mutex> lock(install_mu);
  return active ? installed->min_bytes_.load(std::memory_order_relaxed) : 0;
}

at::Tensor WeftBackend::allocateTensor(long size, at::TensorOptions options) {
  TORCH_CHECK_VALUE(!options.has_device() || options.device().is_cpu(),
                    "weft allocate_tensor: rank ", rank_, ": weft allocates CPU tensors only (its "
                    "shared memory), not on ", options.device(),
                    "; supports_tensor_alloc says so for a device with an index");
  return EmptyShared({static_cast<int64_t>(size)},
                     c10::typeMetaToScalarType(options.dtype()));
}

}  // namespace weft_torch
