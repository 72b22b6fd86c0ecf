// all_to_all (unequal splits and lists: pairwise sends and receives), send, recv,
// recvAnysource and barrier.
#include <cstring>

#include "backend.h"
#include "errors.h"
#include "tensors.h"

namespace weft_torch {

using c10d::OpType;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;

namespace {

// The order in which this rank exchanges with its peers in Exchange, as (peer, send
// first). Host buffers: every peer in rank order, receive first; weft's non-blocking
// sends and receives progress concurrently, so any order completes. Stream calls may
// return only at completion (WEFT_CUDA_STREAM_WAIT=sync), so they must never wait on a
// peer that is itself waiting on a third: the rounds of a round-robin tournament, in
// which rank r meets (round - r) mod size, so each round pairs ranks off (a rank paired
// with itself sits the round out), and the lower rank of a pair sends first.
std::vector<std::pair<int, bool>> ExchangeOrder(int rank, int size, bool on_stream) {
  std::vector<std::pair<int, bool>> order;
  for (int step = 0; step < size; ++step) {
    int peer = on_stream ? (step - rank + size) % size : step;
    if (peer != rank) order.emplace_back(peer, on_stream && rank < peer);
  }
  return order;
}

}  // namespace

WorkPtr WeftBackend::Exchange(OpType type, Timeout timeout, c10::Device device,
                              std::vector<at::Tensor> outputs,
                              std::vector<at::Tensor> send_bufs,
                              std::vector<at::Tensor> recv_bufs,
                              std::function<void()> on_success,
                              std::vector<at::Tensor> keep_alive) {
  TORCH_CHECK_VALUE(Bytes(send_bufs[rank_]) == Bytes(recv_bufs[rank_]),
                    "weft alltoall: this rank sends itself ", Bytes(send_bufs[rank_]),
                    " bytes but expects ", Bytes(recv_bufs[rank_]));
  // This rank's own slot never touches the wire (on CUDA: a copy on the current stream,
  // ahead of the stream calls).
  if (Bytes(send_bufs[rank_]) > 0) {
    if (device.is_cuda()) {
      recv_bufs[rank_].copy_(send_bufs[rank_]);
    } else {
      std::memcpy(recv_bufs[rank_].data_ptr(), send_bufs[rank_].data_ptr(),
                  Bytes(send_bufs[rank_]));
    }
  }
  // Every pair exchanges a message, even an empty one, so that splits the two sides
  // disagree on are reported by weft's size check instead of waiting for a timeout.
  auto issue = [&](Issuer& is) {
    for (auto [p, send_first] : ExchangeOrder(rank_, size_, is.on_stream)) {
      auto recv = [&] {
        is([&](weftRequest_t* r) {
          return weftIRecv(recv_bufs[p].data_ptr(), Bytes(recv_bufs[p]), weftUint8, p, comm_,
                           r);
        }, [&](weftStream_t s) {
          return weftRecvStream(StreamPtr(recv_bufs[p]), Bytes(recv_bufs[p]), weftUint8, p,
                                comm_, s);
        });
      };
      auto send = [&] {
        is([&](weftRequest_t* r) {
          return weftISend(send_bufs[p].data_ptr(), Bytes(send_bufs[p]), weftUint8, p, comm_,
                           r);
        }, [&](weftStream_t s) {
          return weftSendStream(StreamPtr(send_bufs[p]), Bytes(send_bufs[p]), weftUint8, p,
                                comm_, s);
        });
      };
      if (send_first) {
        send();
        recv();
      } else {
        recv();
        send();
      }
    }
  };
  return Launch(type, "alltoall", timeout, device, std::move(outputs), issue, std::move(on_success),
                std::move(keep_alive), /*point_to_point=*/true);
}

WorkPtr WeftBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                   std::vector<int64_t>& output_split_sizes,
                                   std::vector<int64_t>& input_split_sizes,
                                   const c10d::AllToAllOptions& opts) {
  c10::Device device = OpDevice({input, output}, "alltoall");
  CheckSameType(input, output, "alltoall");
  CopyBacks copy_backs;
  at::Tensor src = ContiguousBuffer(input, false, copy_backs);
  at::Tensor dst = ContiguousBuffer(output, true, copy_backs);
  if (output_split_sizes.empty() && input_split_sizes.empty()) {
    TORCH_CHECK_VALUE(input.numel() == output.numel() && input.numel() % size_ == 0,
                      "weft all_to_all_single: input and output must have the same number "
                      "of elements, divisible by the world size (got ", input.numel(), " and ",
                      output.numel(), ")");
    auto issue = [&](Issuer& is) {
      is([&](weftRequest_t* r) {
        return weftIAllToAll(src.data_ptr(), dst.data_ptr(), Bytes(src) / size_, weftUint8,
                             comm_, r);
      }, [&](weftStream_t s) {
        return weftAllToAllStream(src.data_ptr(), dst.data_ptr(), Bytes(src) / size_,
                                  weftUint8, comm_, s);
      });
    };
    return Launch(OpType::ALLTOALL_BASE, "alltoall", opts.timeout, device, {output}, issue,
                  CopyBackFn(std::move(copy_backs)), {src, dst});
  }
  // Unequal splits: weft's all-to-all takes one count, so exchange pairwise with
  // non-blocking sends and receives (which weft progresses concurrently).
  auto slices = [&](const at::Tensor& t, std::vector<int64_t> splits, const char* what) {
    int64_t rows = t.dim() == 0 ? 1 : t.size(0);
    if (splits.empty()) {
      TORCH_CHECK_VALUE(rows % size_ == 0, "weft all_to_all_single: ", what, " has ", rows,
                        " rows, not divisible by the world size");
      splits.assign(size_, rows / size_);
    }
    TORCH_CHECK_VALUE(static_cast<int>(splits.size()) == size_, "weft all_to_all_single: ",
                      what, " split sizes have ", splits.size(), " entries, expected ", size_);
    int64_t total = 0;
    for (int64_t s : splits) total += s;
    TORCH_CHECK_VALUE(total == rows, "weft all_to_all_single: ", what, " split sizes add up "
                      "to ", total, " but the tensor has ", rows, " rows");
    int64_t row_numel = rows == 0 ? 0 : t.numel() / rows;
    std::vector<at::Tensor> out;
    at::Tensor flat = t.reshape({-1});
    int64_t offset = 0;
    for (int64_t s : splits) {
      out.push_back(flat.narrow(0, offset * row_numel, s * row_numel));
      offset += s;
    }
    return out;
  };
  return Exchange(OpType::ALLTOALL_BASE, opts.timeout, device, {output},
                  slices(src, input_split_sizes, "input"),
                  slices(dst, output_split_sizes, "output"), CopyBackFn(std::move(copy_backs)),
                  {src, dst});
}

WorkPtr WeftBackend::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                              const c10d::AllToAllOptions& opts) {
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ &&
                  static_cast<int>(outputs.size()) == size_,
              "weft alltoall: expects world-size lists of inputs and outputs (got ",
              inputs.size(), " and ", outputs.size(), ")");
  CopyBacks copy_backs;
  std::vector<at::Tensor> srcs, dsts;
  c10::Device device = OpDevice({inputs, outputs}, "alltoall");
  for (int p = 0; p < size_; ++p) {
    CheckSameType(inputs[p], outputs[p], "alltoall");
    srcs.push_back(ContiguousBuffer(inputs[p], false, copy_backs));
    dsts.push_back(ContiguousBuffer(outputs[p], true, copy_backs));
  }
  std::vector<at::Tensor> keep = srcs;
  keep.insert(keep.end(), dsts.begin(), dsts.end());
  return Exchange(OpType::ALLTOALL, opts.timeout, device, outputs, srcs, dsts,
                  CopyBackFn(std::move(copy_backs)), std::move(keep));
}

// --- point to point and barrier ------------------------------------------------------
// torch's `tag` travels with each message, and a receive takes the first message from
// its peer with its tag, as with gloo (over shm and single-rail tcp; weft.h).

WorkPtr WeftBackend::send(std::vector<at::Tensor>& tensors, int dst_rank, int tag) {
  const at::Tensor& t = Single(tensors, "send");
  CopyBacks unused;
  at::Tensor buf = ContiguousBuffer(t, false, unused);
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftISendTagged(buf.data_ptr(), Bytes(buf), weftUint8, dst_rank, tag, comm_, r);
    }, [&](weftStream_t s) {
      return weftSendStreamTagged(StreamPtr(buf), Bytes(buf), weftUint8, dst_rank, tag, comm_, s);
    });
  };
  return Launch(OpType::SEND, "send", c10d::kUnsetTimeout, t.device(), tensors, issue, nullptr,
                {buf}, /*point_to_point=*/true);
}

WorkPtr WeftBackend::recv(std::vector<at::Tensor>& tensors, int src_rank, int tag) {
  const at::Tensor& t = Single(tensors, "recv");
  CopyBacks copy_backs;
  at::Tensor buf = ContiguousBuffer(t, true, copy_backs);
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftIRecvTagged(buf.data_ptr(), Bytes(buf), weftUint8, src_rank, tag, comm_, r);
    }, [&](weftStream_t s) {
      return weftRecvStreamTagged(StreamPtr(buf), Bytes(buf), weftUint8, src_rank, tag, comm_, s);
    });
  };
  return Launch(OpType::RECV, "recv", c10d::kUnsetTimeout, t.device(), tensors, issue,
                CopyBackFn(std::move(copy_backs)), {buf}, /*point_to_point=*/true);
}

WorkPtr WeftBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  const at::Tensor& t = Single(tensors, "recvAnysource");
  TORCH_CHECK(!t.is_cuda(), "weft recvAnysource: weft receives from any source into host "
              "memory only; name the source for a CUDA tensor");
  CopyBacks copy_backs;
  at::Tensor buf = ContiguousBuffer(t, true, copy_backs);
  auto source = std::make_shared<int>(-1);  // written by weft before the Work completes
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftIRecvAny(buf.data_ptr(), Bytes(buf), weftUint8, tag, source.get(), comm_, r);
    }, nullptr);
  };
  WorkPtr work = Launch(OpType::RECVANYSOURCE, "recvAnysource", c10d::kUnsetTimeout, t.device(),
                        tensors, issue, CopyBackFn(std::move(copy_backs)), {buf},
                        /*point_to_point=*/true);
  // Launch made a WeftWork (CPU); the caller reads the source only after it completes.
  static_cast<WeftWork*>(work.get())->SetSource(std::move(source));
  return work;
}

// A host barrier for CPU and CUDA alike (torch hands in no tensors): weft runs it after
// every operation issued before it, stream calls included, and wait() blocks the host
// until every rank has reached it, which is what torch's barrier promises.
WorkPtr WeftBackend::barrier(const c10d::BarrierOptions& opts) {
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) { return weftIBarrier(comm_, r); },
       [&](weftStream_t s) { return weftBarrierStream(comm_, s); });
  };
  return Launch(OpType::BARRIER, "barrier", opts.timeout, c10::Device(c10::kCPU), {}, issue,
                nullptr, {});
}

}  // namespace weft_torch
