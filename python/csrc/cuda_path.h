// CUDA tensors, issued NCCL-style on torch's current stream (docs/TORCH.md).
//
// A CUDA operation is issued by the calling thread with weft's `weft*Stream` calls on the
// current stream of the tensors' device, never through the Completer: weft starts it when
// the stream reaches it, and work queued on the stream afterwards comes after it (weft's
// WEFT_CUDA_STREAM_WAIT decides whether the call returns at completion, the default, or
// once enqueued). The Work records an end event on that stream; wait() makes the caller's
// current stream wait on the event (not the host), and the Future is completed at once,
// carrying the CUDA device so that its callbacks are ordered on the stream.
//
// Compiled with CUDA support only when setup.py defines WEFT_TORCH_CUDA (torch has CUDA and
// the CUDA toolkit's headers were found). Otherwise CudaBuilt() is false, CheckDense
// refuses CUDA tensors with CudaMissingReason(), and the functions below throw.
#pragma once

#include <functional>
#include <vector>

#include <ATen/ATen.h>
#include <weft/weft.h>

#include "work.h"

namespace weft_torch {

// Whether weft._C was compiled with CUDA support.
bool CudaBuilt();
// Why it was not ("" when it was): which build-time condition failed.
const char* CudaMissingReason();

// Runs `body` with `device` as the current CUDA device and its current stream (the
// calling thread's, torch.cuda.current_stream()) as weft's stream argument.
void OnCurrentStream(c10::Device device, const std::function<void(weftStream_t)>& body);

// Tells torch's caching allocator that `tensors` are used on `device`'s current stream,
// so their memory is not handed out again before the work queued there has finished.
void RecordOnCurrentStream(const std::vector<at::Tensor>& tensors, c10::Device device);

// A Work for an operation queued on `device`'s current stream, not yet completed: its
// end event is recorded by CompleteCudaWork (a coalesced batch's members, whose stream
// calls weftGroupEnd issues at endCoalescing).
c10::intrusive_ptr<WeftWork> PendingCudaWork(int rank, c10d::OpType type,
                                             std::vector<at::Tensor> outputs, c10::Device device);
// Records the end event of a PendingCudaWork on the current stream and completes it.
void CompleteCudaWork(WeftWork& work);

// A completed Work for an operation just queued on `device`'s current stream: records the
// end event there and marks the Future completed with `outputs` (from this thread).
c10::intrusive_ptr<WeftWork> CompletedCudaWork(int rank, c10d::OpType type,
                                               std::vector<at::Tensor> outputs,
                                               c10::Device device);

}  // namespace weft_torch
