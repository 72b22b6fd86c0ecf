#include "backend.h"

#include <algorithm>

#include "cuda_path.h"
#include "errors.h"
#include "tensors.h"
#include "types.h"

namespace weft_torch {

using c10d::OpType;
using WorkPtr = c10::intrusive_ptr<c10d::Work>;


void WeftBackend::Issuer::operator()(
    const std::function<weftResult_t(weftRequest_t*)>& call,
    const std::function<weftResult_t(weftStream_t)>& stream_call) {
  if (!error.empty()) return;
  if (on_stream) {
    if (!stream_call) {  // recvAnysource: host memory, no stream; and no estimate
      error = std::string("weft ") + name + ": only as a non-blocking host call (no stream " +
              "form, and its time cannot be estimated: its peer is chosen on arrival)";
      return;
    }
    weftResult_t r = stream_call(stream);
    if (r != weftSuccess) error = DescribeFailure(name, r, comm);
    return;
  }
  weftRequest_t req = nullptr;
  weftResult_t r = call(&req);
  if (r == weftSuccess) {
    requests.push_back(req);
  } else {
    error = DescribeFailure(name, r, comm);
  }
}

void WeftBackend::ApplyTimeout(Timeout timeout, const char* name) {
  uint64_t want =
      timeout.count() > 0 ? static_cast<uint64_t>(timeout.count()) : default_timeout_ms_;
  // An extension ends when its first operation has completed: checked here, when the
  // next operation takes its timeout, which is the only time it matters.
  ephemeral_.erase(std::remove_if(ephemeral_.begin(), ephemeral_.end(),
                                  [](const Ephemeral& e) {
                                    if (!e.first) return false;
                                    auto work = e.first->lock();
                                    return !work || work->isCompleted();
                                  }),
                   ephemeral_.end());
  for (const Ephemeral& e : ephemeral_) want += e.ms;
  if (want == comm_timeout_ms_) return;
  Check(weftCommSetTimeout(comm_, want), name, comm_);
  comm_timeout_ms_ = want;
}

void WeftBackend::StartEphemeral(const c10::intrusive_ptr<WeftWork>& work) {
  for (Ephemeral& e : ephemeral_) {
    if (!e.first) e.first = c10::weak_intrusive_ptr<WeftWork>(work);
  }
}

void WeftBackend::CheckCoalescingDevice(c10::Device device, const char* name) {
  if (!coalescing_) return;
  if (!coalesced_device_) coalesced_device_ = device;
  TORCH_CHECK(*coalesced_device_ == device, "weft ", name, ": the operations of one "
              "coalesced batch must be on one device (the batch started on ",
              *coalesced_device_, ", this one is on ", device, ")");
}

WorkPtr WeftBackend::Launch(OpType type, const char* name, Timeout timeout, c10::Device device,
                            std::vector<at::Tensor> outputs,
                            const std::function<void(Issuer&)>& issue,
                            std::function<void()> on_success,
                            std::vector<at::Tensor> keep_alive, bool point_to_point) {
  if (estimating_.load(std::memory_order_relaxed)) return Estimated(type, name, issue);
  if (device.is_cuda()) {
    return LaunchOnStream(type, name, timeout, device, std::move(outputs), issue,
                          std::move(on_success), std::move(keep_alive), point_to_point);
  }
  auto work = c10::make_intrusive<WeftWork>(rank_, type, nullptr, std::move(outputs));
  work->SetAbortGroup(AbortGroupFn());
  PendingOp op;
  op.work = work;
  op.name = name;
  op.point_to_point = point_to_point;
  op.on_success = std::move(on_success);
  op.keep_alive = std::move(keep_alive);
  op.issued = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(issue_mu_);
  op.seq = seq_;
  RequireComm(name);
  CheckCoalescingDevice(device, name);
  ApplyTimeout(timeout, name);
  Issuer issuer{comm_, name};
  issue(issuer);
  // Nothing in flight: fail in the caller's thread, as torch's own backends do for
  // errors they can see at once. Otherwise the Work fails once the rest has finished.
  if (!issuer.error.empty() && issuer.requests.empty()) ThrowBackendError(issuer.error);
  op.requests = std::move(issuer.requests);
  op.error = std::move(issuer.error);
  if (!point_to_point) ++seq_;
  if (coalescing_) coalesced_.push_back(work);
  StartEphemeral(work);
  completer_->Push(std::move(op));
  return work;
}

WorkPtr WeftBackend::LaunchOnStream(OpType type, const char* name, Timeout timeout,
                                    c10::Device device,
                                    std::vector<at::Tensor> outputs,
                                    const std::function<void(Issuer&)>& issue,
                                    std::function<void()> on_success,
                                    std::vector<at::Tensor> keep_alive, bool point_to_point) {
  c10::intrusive_ptr<WeftWork> work;
  OnCurrentStream(device, [&](weftStream_t stream) {
    std::lock_guard<std::mutex> lock(issue_mu_);
    RequireComm(name);
    CheckCoalescingDevice(device, name);
    ApplyTimeout(timeout, name);
    Issuer issuer{comm_, name, stream, /*on_stream=*/true};
    issue(issuer);
    // A stream call that fails has failed the communicator (weft), so the calls before
    // it cannot complete either: report it here, as NCCL does for a failed enqueue.
    if (!issuer.error.empty()) ThrowBackendError(issuer.error);
    keep_alive.insert(keep_alive.end(), outputs.begin(), outputs.end());
    if (!point_to_point) ++seq_;
    if (coalescing_) {
      // weftGroupEnd puts the stream calls on the stream at endCoalescing: what
      // follows them waits until then.
      work = PendingCudaWork(rank_, type, std::move(outputs), device);
      work->SetAbortGroup(AbortGroupFn());
      coalesced_.push_back(work);
      coalesced_after_.push_back([on_success = std::move(on_success),
                                  keep_alive = std::move(keep_alive), device, work] {
        if (on_success) on_success();
        RecordOnCurrentStream(keep_alive, device);
        CompleteCudaWork(*work);
      });
      StartEphemeral(work);
      return;
    }
    // Copy-backs are queued on the same stream, after weft's calls.
    if (on_success) on_success();
    RecordOnCurrentStream(keep_alive, device);
    work = CompletedCudaWork(rank_, type, std::move(outputs), device);
    work->SetAbortGroup(AbortGroupFn());
    StartEphemeral(work);
  });
  return work;
}

// --- reductions ---------------------------------------------------------------------

WorkPtr WeftBackend::AllReduceMany(std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op,
                                   OpType type, Timeout timeout) {
  std::vector<at::Tensor> bufs;
  std::vector<Reduction> reds;
  CopyBacks copy_backs;
  c10::Device device = OpDevice({tensors}, "allreduce");
  for (const at::Tensor& t : tensors) {
    reds.push_back(ToReduction(t.scalar_type(), op));
    bufs.push_back(ContiguousBuffer(t, true, copy_backs));
  }
  auto issue = [&](Issuer& is) {
    for (size_t i = 0; i < bufs.size(); ++i) {
      void* p = bufs[i].data_ptr();
      size_t n = bufs[i].numel();
      is([&](weftRequest_t* r) {
        return weftIAllReduce(p, p, n, reds[i].dtype, reds[i].op, comm_, r);
      }, [&](weftStream_t s) {
        return weftAllReduceStream(p, p, n, reds[i].dtype, reds[i].op, comm_, s);
      });
    }
  };
  // A copy for keep_alive: Launch's by-value arguments are built before `issue` runs.
  std::vector<at::Tensor> keep = bufs;
  return Launch(type, "allreduce", timeout, device, tensors, issue,
                CopyBackFn(std::move(copy_backs)), std::move(keep));
}

WorkPtr WeftBackend::allreduce(std::vector<at::Tensor>& tensors,
                               const c10d::AllreduceOptions& opts) {
  // torch hands sparse CPU tensors to allreduce, as gloo expects.
  if (tensors.size() == 1 && tensors[0].defined() && tensors[0].is_sparse())
    return allreduce_sparse(tensors, opts);
  Single(tensors, "allreduce");
  return AllReduceMany(tensors, opts.reduceOp, OpType::ALLREDUCE, opts.timeout);
}

WorkPtr WeftBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                         const c10d::AllreduceCoalescedOptions& opts) {
  return AllReduceMany(tensors, opts.reduceOp, OpType::ALLREDUCE_COALESCED, opts.timeout);
}

WorkPtr WeftBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  const at::Tensor& t = Single(tensors, "reduce");
  c10::Device device = t.device();
  Reduction red = ToReduction(t.scalar_type(), opts.reduceOp);
  int root = static_cast<int>(opts.rootRank);
  bool is_root = root == rank_;
  CopyBacks copy_backs;
  // Only the root's tensor receives the result (weft takes no receive buffer elsewhere),
  // so the other ranks' inputs are left as they were.
  at::Tensor buf = ContiguousBuffer(t, is_root, copy_backs);
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftIReduce(buf.data_ptr(), is_root ? buf.data_ptr() : nullptr, buf.numel(),
                         red.dtype, red.op, root, comm_, r);
    }, [&](weftStream_t s) {
      return weftReduceStream(buf.data_ptr(), is_root ? buf.data_ptr() : nullptr, buf.numel(),
                              red.dtype, red.op, root, comm_, s);
    });
  };
  return Launch(OpType::REDUCE, "reduce", opts.timeout, device, tensors, issue,
                CopyBackFn(std::move(copy_backs)), {buf});
}

WorkPtr WeftBackend::ReduceScatterTensors(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::ReduceOp& op, OpType type,
                                          Timeout timeout) {
  TORCH_CHECK(outputs.size() == inputs.size(), "weft reduce_scatter: ", outputs.size(),
              " outputs but ", inputs.size(), " inputs");
  std::vector<at::Tensor> srcs, dsts;
  std::vector<Reduction> reds;
  CopyBacks copy_backs;
  c10::Device device = OpDevice({inputs, outputs}, "reduce_scatter");
  for (size_t i = 0; i < inputs.size(); ++i) {
    CheckSameType(inputs[i], outputs[i], "reduce_scatter");
    TORCH_CHECK_VALUE(inputs[i].numel() == outputs[i].numel() * size_,
                      "weft reduce_scatter_tensor: input has ", inputs[i].numel(),
                      " elements, expected world size x output = ", outputs[i].numel() * size_);
    reds.push_back(ToReduction(inputs[i].scalar_type(), op));
    srcs.push_back(ContiguousBuffer(inputs[i], false, copy_backs));
    dsts.push_back(ContiguousBuffer(outputs[i], true, copy_backs));
  }
  auto issue = [&](Issuer& is) {
    for (size_t i = 0; i < srcs.size(); ++i) {
      is([&](weftRequest_t* r) {
        return weftIReduceScatter(srcs[i].data_ptr(), dsts[i].data_ptr(), dsts[i].numel(),
                                  reds[i].dtype, reds[i].op, comm_, r);
      }, [&](weftStream_t s) {
        return weftReduceScatterStream(srcs[i].data_ptr(), dsts[i].data_ptr(), dsts[i].numel(),
                                       reds[i].dtype, reds[i].op, comm_, s);
      });
    }
  };
  std::vector<at::Tensor> keep = srcs;
  keep.insert(keep.end(), dsts.begin(), dsts.end());
  return Launch(type, "reduce_scatter", timeout, device, outputs, issue,
                CopyBackFn(std::move(copy_backs)), std::move(keep));
}

WorkPtr WeftBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                          const c10d::ReduceScatterOptions& opts) {
  std::vector<at::Tensor> outs{output}, ins{input};
  return ReduceScatterTensors(outs, ins, opts.reduceOp, OpType::_REDUCE_SCATTER_BASE, opts.timeout);
}

WorkPtr WeftBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::ReduceScatterOptions& opts) {
  return ReduceScatterTensors(outputs, inputs, opts.reduceOp,
                              OpType::REDUCE_SCATTER_TENSOR_COALESCED, opts.timeout);
}

WorkPtr WeftBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                    std::vector<std::vector<at::Tensor>>& inputs,
                                    const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = Single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "weft reduce_scatter: expects one list of world-size input tensors");
  OpDevice({outputs, inputs[0]}, "reduce_scatter");
  // weft reduces one contiguous buffer: lay the per-rank inputs end to end.
  at::Tensor flat = at::empty({out.numel() * size_}, out.options());
  for (int r = 0; r < size_; ++r) {
    const at::Tensor& in = inputs[0][r];
    CheckSameType(in, out, "reduce_scatter");
    TORCH_CHECK_VALUE(in.numel() == out.numel(), "weft reduce_scatter: input ", r, " has ",
                      in.numel(), " elements, the output ", out.numel());
    flat.narrow(0, r * out.numel(), out.numel()).copy_(in.reshape({-1}));
  }
  std::vector<at::Tensor> ins{flat};
  return ReduceScatterTensors(outputs, ins, opts.reduceOp, OpType::REDUCE_SCATTER, opts.timeout);
}

// --- data movement (bytes, any dtype) -----------------------------------------------

WorkPtr WeftBackend::broadcast(std::vector<at::Tensor>& tensors,
                               const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = Single(tensors, "broadcast");
  c10::Device device = t.device();
  int root = static_cast<int>(opts.rootRank);
  CopyBacks copy_backs;
  at::Tensor buf = ContiguousBuffer(t, root != rank_, copy_backs);
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftIBroadcast(buf.data_ptr(), buf.data_ptr(), Bytes(buf), weftUint8, root,
                            comm_, r);
    }, [&](weftStream_t s) {
      return weftBroadcastStream(buf.data_ptr(), buf.data_ptr(), Bytes(buf), weftUint8, root,
                                 comm_, s);
    });
  };
  return Launch(OpType::BROADCAST, "broadcast", opts.timeout, device, tensors, issue,
                CopyBackFn(std::move(copy_backs)), {buf});
}

WorkPtr WeftBackend::AllGatherTensors(std::vector<at::Tensor>& outputs,
                                      std::vector<at::Tensor>& inputs, OpType type,
                                      Timeout timeout) {
  TORCH_CHECK(outputs.size() == inputs.size(), "weft allgather: ", outputs.size(),
              " outputs but ", inputs.size(), " inputs");
  std::vector<at::Tensor> srcs, dsts;
  CopyBacks copy_backs;
  c10::Device device = OpDevice({inputs, outputs}, "allgather");
  for (size_t i = 0; i < inputs.size(); ++i) {
    CheckSameType(inputs[i], outputs[i], "allgather");
    TORCH_CHECK_VALUE(outputs[i].numel() == inputs[i].numel() * size_,
                      "weft all_gather_into_tensor: output has ", outputs[i].numel(),
                      " elements, expected world size x input = ", inputs[i].numel() * size_);
    srcs.push_back(ContiguousBuffer(inputs[i], false, copy_backs));
    dsts.push_back(ContiguousBuffer(outputs[i], true, copy_backs));
  }
  auto issue = [&](Issuer& is) {
    for (size_t i = 0; i < srcs.size(); ++i) {
      is([&](weftRequest_t* r) {
        return weftIAllGather(srcs[i].data_ptr(), dsts[i].data_ptr(), Bytes(srcs[i]),
                              weftUint8, comm_, r);
      }, [&](weftStream_t s) {
        return weftAllGatherStream(srcs[i].data_ptr(), dsts[i].data_ptr(), Bytes(srcs[i]),
                                   weftUint8, comm_, s);
      });
    }
  };
  std::vector<at::Tensor> keep = srcs;
  keep.insert(keep.end(), dsts.begin(), dsts.end());
  return Launch(type, "allgather", timeout, device, outputs, issue,
                CopyBackFn(std::move(copy_backs)), std::move(keep));
}

WorkPtr WeftBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                     const c10d::AllgatherOptions& opts) {
  std::vector<at::Tensor> outs{output}, ins{input};
  return AllGatherTensors(outs, ins, OpType::_ALLGATHER_BASE, opts.timeout);
}

WorkPtr WeftBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) {
  return AllGatherTensors(outputs, inputs, OpType::ALLGATHER_INTO_TENSOR_COALESCED, opts.timeout);
}

WorkPtr WeftBackend::AllGatherLists(std::vector<std::vector<at::Tensor>>& per_input,
                                    std::vector<at::Tensor>& inputs, OpType type,
                                    Timeout timeout) {
  TORCH_CHECK(per_input.size() == inputs.size(), "weft allgather: ", per_input.size(),
              " output lists but ", inputs.size(), " inputs");
  // weft gathers into one buffer: gather into a flat buffer per input, then copy the
  // pieces into the caller's output tensors on completion.
  std::vector<at::Tensor> srcs, flats, result;
  CopyBacks copy_backs, unused;
  c10::Device device = OpDevice({inputs}, "allgather");
  for (const auto& list : per_input) OpDevice({inputs, list}, "allgather");
  for (size_t i = 0; i < inputs.size(); ++i) {
    TORCH_CHECK(static_cast<int>(per_input[i].size()) == size_, "weft allgather: output list ",
                i, " has ", per_input[i].size(), " tensors, expected the world size ", size_);
    int64_t n = inputs[i].numel();
    srcs.push_back(ContiguousBuffer(inputs[i], false, unused));
    flats.push_back(at::empty({n * size_}, inputs[i].options()));
    for (int r = 0; r < size_; ++r) {
      const at::Tensor& o = per_input[i][r];
      CheckSameType(o, inputs[i], "allgather");
      TORCH_CHECK_VALUE(o.numel() == n, "weft allgather: output tensors must have as many "
                        "elements as the input (", n, "), got ", o.numel());
      copy_backs.emplace_back(o, flats[i].narrow(0, r * n, n).view(o.sizes()));
      result.push_back(o);
    }
  }
  auto issue = [&](Issuer& is) {
    for (size_t i = 0; i < srcs.size(); ++i) {
      is([&](weftRequest_t* r) {
        return weftIAllGather(srcs[i].data_ptr(), flats[i].data_ptr(), Bytes(srcs[i]),
                              weftUint8, comm_, r);
      }, [&](weftStream_t s) {
        return weftAllGatherStream(srcs[i].data_ptr(), flats[i].data_ptr(), Bytes(srcs[i]),
                                   weftUint8, comm_, s);
      });
    }
  };
  std::vector<at::Tensor> keep = srcs;
  keep.insert(keep.end(), flats.begin(), flats.end());
  return Launch(type, "allgather", timeout, device, result, issue,
                CopyBackFn(std::move(copy_backs)), std::move(keep));
}

WorkPtr WeftBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                         std::vector<at::Tensor>& inputs,
                                         const c10d::AllgatherOptions& opts) {
  // torch passes one output list per rank (outputs[r][i]: input i of rank r, as gloo
  // takes them); AllGatherLists wants one list per input.
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_, "weft allgather_coalesced: ",
              outputs.size(), " output lists, expected one per rank (", size_, ")");
  std::vector<std::vector<at::Tensor>> per_input(inputs.size());
  for (int r = 0; r < size_; ++r) {
    TORCH_CHECK(outputs[r].size() == inputs.size(), "weft allgather_coalesced: output list ",
                r, " has ", outputs[r].size(), " tensors, expected one per input (",
                inputs.size(), ")");
    for (size_t i = 0; i < inputs.size(); ++i) per_input[i].push_back(outputs[r][i]);
  }
  return AllGatherLists(per_input, inputs, OpType::ALLGATHER_COALESCED, opts.timeout);
}

WorkPtr WeftBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                               std::vector<at::Tensor>& inputs,
                               const c10d::AllgatherOptions& opts) {
  Single(inputs, "allgather");
  return AllGatherLists(outputs, inputs, OpType::ALLGATHER, opts.timeout);
}

WorkPtr WeftBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                            std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  const at::Tensor& in = Single(inputs, "gather");
  c10::Device device = in.device();
  for (const auto& list : outputs) OpDevice({inputs, list}, "gather");
  int root = static_cast<int>(opts.rootRank);
  bool is_root = root == rank_;
  at::Tensor flat;
  CopyBacks copy_backs;
  std::vector<at::Tensor> result;
  if (is_root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "weft gather: the root expects one list of world-size output tensors");
    flat = at::empty({in.numel() * size_}, in.options());
    for (int r = 0; r < size_; ++r) {
      const at::Tensor& o = outputs[0][r];
      CheckSameType(o, in, "gather");
      TORCH_CHECK_VALUE(o.numel() == in.numel(), "weft gather: output ", r, " has ",
                        o.numel(), " elements, the input ", in.numel());
      copy_backs.emplace_back(o, flat.narrow(0, r * in.numel(), in.numel()).view(o.sizes()));
    }
    result = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || outputs[0].empty(),
                "weft gather: only the root passes output tensors");
  }
  CopyBacks unused;
  at::Tensor src = ContiguousBuffer(in, false, unused);
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftIGather(src.data_ptr(), is_root ? flat.data_ptr() : nullptr, Bytes(src),
                         weftUint8, root, comm_, r);
    }, [&](weftStream_t s) {
      return weftGatherStream(src.data_ptr(), is_root ? flat.data_ptr() : nullptr, Bytes(src),
                              weftUint8, root, comm_, s);
    });
  };
  std::vector<at::Tensor> keep{src};
  if (is_root) keep.push_back(flat);
  return Launch(OpType::GATHER, "gather", opts.timeout, device, result, issue,
                CopyBackFn(std::move(copy_backs)), std::move(keep));
}

WorkPtr WeftBackend::scatter(std::vector<at::Tensor>& outputs,
                             std::vector<std::vector<at::Tensor>>& inputs,
                             const c10d::ScatterOptions& opts) {
  const at::Tensor& out = Single(outputs, "scatter");
  c10::Device device = out.device();
  for (const auto& list : inputs) OpDevice({outputs, list}, "scatter");
  int root = static_cast<int>(opts.rootRank);
  bool is_root = root == rank_;
  at::Tensor flat;
  if (is_root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "weft scatter: the root expects one list of world-size input tensors");
    flat = at::empty({out.numel() * size_}, out.options());
    for (int r = 0; r < size_; ++r) {
      const at::Tensor& in = inputs[0][r];
      CheckSameType(in, out, "scatter");
      TORCH_CHECK_VALUE(in.numel() == out.numel(), "weft scatter: input ", r, " has ",
                        in.numel(), " elements, the output ", out.numel());
      flat.narrow(0, r * out.numel(), out.numel()).copy_(in.reshape({-1}));
    }
  } else {
    TORCH_CHECK(inputs.empty() || inputs[0].empty(),
                "weft scatter: only the root passes input tensors");
  }
  CopyBacks copy_backs;
  at::Tensor dst = ContiguousBuffer(out, true, copy_backs);
  auto issue = [&](Issuer& is) {
    is([&](weftRequest_t* r) {
      return weftIScatter(is_root ? flat.data_ptr() : nullptr, dst.data_ptr(), Bytes(dst),
                          weftUint8, root, comm_, r);
    }, [&](weftStream_t s) {
      return weftScatterStream(is_root ? flat.data_ptr() : nullptr, dst.data_ptr(), Bytes(dst),
                               weftUint8, root, comm_, s);
    });
  };
  std::vector<at::Tensor> keep{dst};
  if (is_root) keep.push_back(flat);
  return Launch(OpType::SCATTER, "scatter", opts.timeout, device, outputs, issue,
                CopyBackFn(std::move(copy_backs)), std::move(keep));
}

}  // namespace weft_torch
