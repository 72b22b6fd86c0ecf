// torch's one-sided windows (new_window, c10d::Window) on weft's (weftWinCreate, weft.h):
// every rank of the group registers a CPU tensor in weft's shared memory, and puts,
// signals and waits go straight to the peers' memory on this host.
#pragma once

#include <memory>
#include <mutex>

#include <torch/csrc/distributed/c10d/Window.hpp>
#include <weft/weft.h>

#include "backend.h"

namespace weft_torch {

class WeftWindow : public c10d::Window {
 public:
  WeftWindow(c10::weak_intrusive_ptr<WeftBackend> backend, int rank);
  ~WeftWindow() override;

  // Collective (every rank of the group, in the same order). `tensor`: a contiguous CPU
  // tensor in weft's shared memory (weft.torch.empty, use_shared_memory); others are
  // refused on every rank, naming the rank. `owning`: the window keeps the tensor alive
  // (otherwise the caller must, until tensor_deregister).
  void tensor_register(const at::Tensor& tensor, bool owning = true) override;
  // Collective: a barrier on the group (when it still has its communicator), then this
  // rank's mappings go. Tensors from map_remote_tensor keep the memory they view.
  void tensor_deregister() override;
  // Copies `tensor` (contiguous, CPU, the registered dtype) into dst_rank's registered
  // tensor from element target_offset_nelems on. Done when it returns (async_op too).
  c10::intrusive_ptr<c10d::Work> put(const at::Tensor& tensor, int64_t dst_rank,
                                     int64_t target_offset_nelems, bool async_op,
                                     const c10d::PutOptions& opts) override;
  // A 1-D view of rank's registered tensor, mapped into this process (writes go to it).
  at::Tensor map_remote_tensor(int64_t rank) override;
  // The puts this rank made to peer_rank so far are visible to it once its wait_signal
  // for this rank returns.
  c10::intrusive_ptr<c10d::Work> signal(int64_t peer_rank, bool async_op,
                                        const c10d::SignalOptions& opts) override;
  // Waits for peer_rank's next signal (bounded by opts.timeout, else the group's timeout
  // when the tensor was registered); raises naming the peer on a timeout or its death.
  c10::intrusive_ptr<c10d::Work> wait_signal(int64_t peer_rank, bool async_op,
                                             const c10d::WaitSignalOptions& opts) override;
  // Host memory, one coherent view: UNIFIED.
  c10d::WindowAttr get_attr(int64_t peer_rank) override;

 private:
  struct Registration {
    std::shared_ptr<weftWindow> win;
    c10::ScalarType dtype;
  };
  Registration Registered(const char* api);  // throws if none

  c10::weak_intrusive_ptr<WeftBackend> backend_;
  const int rank_;
  std::mutex mu_;
  std::shared_ptr<weftWindow> win_;  // (mu_) freed with the last view of it
  at::Tensor owned_;                 // (mu_) the registered tensor, when owning
  c10::ScalarType dtype_ = c10::ScalarType::Undefined;  // (mu_) the registered dtype
};

}  // namespace weft_torch
