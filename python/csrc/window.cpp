#include "window.h"

#include "errors.h"
#include "work.h"

namespace weft_torch {
namespace {

c10::intrusive_ptr<c10d::Work> Done(int rank) {
  auto work = c10::make_intrusive<WeftWork>(rank, c10d::OpType::UNKNOWN, "weft:window",
                                            std::vector<at::Tensor>{});
  work->Complete(nullptr);
  return work;
}

int Peer(int64_t rank, int self, const char* api) {
  TORCH_CHECK_VALUE(rank >= 0 && rank <= INT32_MAX, "weft window ", api, ": rank ", self,
                    ": peer ", rank, " is out of range");
  return static_cast<int>(rank);
}

// A window call's failure: its message is this thread's last weft error.
void CheckWin(weftResult_t r, const char* api) {
  if (r != weftSuccess) Check(r, api, nullptr);
}

}  // namespace

WeftWindow::WeftWindow(c10::weak_intrusive_ptr<WeftBackend> backend, int rank)
    : backend_(std::move(backend)), rank_(rank) {}

WeftWindow::~WeftWindow() = default;  // win_'s deleter frees the weft window

WeftWindow::Registration WeftWindow::Registered(const char* api) {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(win_ != nullptr, "weft window ", api, ": rank ", rank_,
              ": no tensor is registered (tensor_register first)");
  return {win_, dtype_};
}

void WeftWindow::tensor_register(const at::Tensor& tensor, bool owning) {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(win_ == nullptr, "weft window tensor_register: rank ", rank_,
              ": a tensor is already registered (tensor_deregister first)");
  TORCH_CHECK_VALUE(tensor.device().is_cpu() && tensor.is_contiguous(),
                    "weft window tensor_register: rank ", rank_, ": the tensor must be a "
                    "contiguous CPU tensor in weft's shared memory (weft.torch.empty), got ",
                    tensor.device(), tensor.is_contiguous() ? "" : ", not contiguous");
  c10::intrusive_ptr<WeftBackend> backend = backend_.lock();
  TORCH_CHECK(backend, "weft window tensor_register: rank ", rank_, ": the group is gone");
  weftWindow_t win = nullptr;
  // Collective: a rank whose tensor is not weft memory still takes part, so every rank
  // fails with its name instead of waiting for it.
  backend->CreateWindow(tensor.data_ptr(), tensor.nbytes(), &win);
  win_ = std::shared_ptr<weftWindow>(win, [](weftWindow_t w) { weftWinFree(w); });
  dtype_ = tensor.scalar_type();
  if (owning) owned_ = tensor;
}

void WeftWindow::tensor_deregister() {
  Registered("tensor_deregister");  // throws if nothing is registered
  // No peer may still put into this rank's tensor once the caller reuses it.
  if (c10::intrusive_ptr<WeftBackend> backend = backend_.lock()) {
    if (backend->isInitialized()) backend->barrier(c10d::BarrierOptions())->wait();
  }
  std::lock_guard<std::mutex> lock(mu_);
  win_.reset();
  owned_ = at::Tensor();
  dtype_ = c10::ScalarType::Undefined;
}

c10::intrusive_ptr<c10d::Work> WeftWindow::put(const at::Tensor& tensor, int64_t dst_rank,
                                               int64_t target_offset_nelems, bool /*async_op*/,
                                               const c10d::PutOptions& /*opts*/) {
  auto [win, dtype] = Registered("put");
  TORCH_CHECK_VALUE(tensor.device().is_cpu() && tensor.is_contiguous() &&
                        tensor.scalar_type() == dtype,
                    "weft window put: rank ", rank_, ": the tensor must be a contiguous CPU "
                    "tensor of the registered dtype ", dtype, ", got ", tensor.scalar_type(),
                    " on ", tensor.device());
  TORCH_CHECK_VALUE(target_offset_nelems >= 0, "weft window put: rank ", rank_,
                    ": target_offset_nelems ", target_offset_nelems, " is negative");
  const size_t offset = static_cast<size_t>(target_offset_nelems) * c10::elementSize(dtype);
  CheckWin(weftWinPut(win.get(), tensor.data_ptr(), tensor.nbytes(), Peer(dst_rank, rank_, "put"),
                      offset),
           "window put (weftWinPut)");
  return Done(rank_);
}

at::Tensor WeftWindow::map_remote_tensor(int64_t rank) {
  auto [win, dtype] = Registered("map_remote_tensor");
  void* ptr = nullptr;
  size_t bytes = 0;
  CheckWin(weftWinPeerPtr(win.get(), Peer(rank, rank_, "map_remote_tensor"), &ptr, &bytes),
           "window map_remote_tensor (weftWinPeerPtr)");
  const int64_t n = static_cast<int64_t>(bytes / c10::elementSize(dtype));
  if (n == 0) return at::empty({0}, at::TensorOptions().dtype(dtype));
  // The view holds the window (and so the mapping) until the view is freed.
  return at::from_blob(ptr, {n}, [win](void*) {}, at::TensorOptions().dtype(dtype));
}

c10::intrusive_ptr<c10d::Work> WeftWindow::signal(int64_t peer_rank, bool /*async_op*/,
                                                  const c10d::SignalOptions& /*opts*/) {
  std::shared_ptr<weftWindow> win = Registered("signal").win;
  CheckWin(weftWinSignal(win.get(), Peer(peer_rank, rank_, "signal")), "window signal (weftWinSignal)");
  return Done(rank_);
}

c10::intrusive_ptr<c10d::Work> WeftWindow::wait_signal(int64_t peer_rank, bool /*async_op*/,
                                                       const c10d::WaitSignalOptions& opts) {
  std::shared_ptr<weftWindow> win = Registered("wait_signal").win;
  const uint64_t timeout_ms =
      opts.timeout.count() > 0 ? static_cast<uint64_t>(opts.timeout.count()) : 0;
  CheckWin(weftWinWaitSignal(win.get(), Peer(peer_rank, rank_, "wait_signal"), timeout_ms),
           "window wait_signal (weftWinWaitSignal)");
  return Done(rank_);
}

c10::intrusive_ptr<c10d::Window> WeftBackend::new_window(const std::optional<at::Tensor>& tensor) {
  c10::weak_intrusive_ptr<WeftBackend> weak(
      c10::intrusive_ptr<WeftBackend>::unsafe_reclaim_from_nonowning(this));
  auto window = c10::make_intrusive<WeftWindow>(std::move(weak), rank_);
  if (tensor) window->tensor_register(*tensor, /*owning=*/true);
  return window;
}

void WeftBackend::CreateWindow(void* buff, size_t bytes, weftWindow_t* win) {
  std::lock_guard<std::mutex> lock(issue_mu_);
  RequireComm("window tensor_register");
  const weftResult_t r = weftWinCreate(comm_, buff, bytes, win);
  if (r == weftSuccess) return;
  std::string error = DescribeFailure("window tensor_register (weftWinCreate)", r, comm_);
  if (r == weftInvalidArgument) {
    error += " (a window's tensors come from weft.torch.empty, or from torch's allocator "
             "under weft.torch.use_shared_memory)";
  }
  ThrowBackendError(error);
}

c10d::WindowAttr WeftWindow::get_attr(int64_t /*peer_rank*/) {
  c10d::WindowAttr attr;
  attr.access_type = c10d::WindowAccessType::UNIFIED;
  return attr;
}

}  // namespace weft_torch
