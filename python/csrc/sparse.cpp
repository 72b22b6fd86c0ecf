// Sum of sparse COO tensors, as gloo computes it: every rank's coalesced indices and
// values are all-gathered (padded to the largest nnz, since weft's all-gather moves equal
// parts; the counts travel first) and coalesced into one tensor, which adds up the
// entries that share an index. Blocking: each all-gather is waited for on the calling
// thread, then the result is copied into the caller's tensor (its nnz changes).
#include "backend.h"
#include "work.h"

namespace weft_torch {

c10::intrusive_ptr<c10d::Work> WeftBackend::allreduce_sparse(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  TORCH_CHECK_VALUE(tensors.size() == 1, "weft allreduce (sparse): rank ", rank_,
                    ": expects one tensor per call (got ", tensors.size(), ")");
  at::Tensor& t = tensors[0];
  TORCH_CHECK_VALUE(t.defined() && t.layout() == at::kSparse, "weft allreduce (sparse): rank ",
                    rank_, ": expects a sparse COO tensor (got layout ", t.layout(), ")");
  TORCH_CHECK_VALUE(t.device().is_cpu(), "weft allreduce (sparse): rank ", rank_,
                    ": sparse tensors must be on the CPU (got ", t.device(), ")");
  TORCH_CHECK_VALUE(opts.reduceOp == c10d::ReduceOp::SUM, "weft allreduce (sparse): rank ",
                    rank_, ": sparse tensors are summed only (ReduceOp.SUM), as with gloo");

  RequireOutsideBatch("allreduce (sparse)");
  const at::Tensor local = t.coalesce();
  const at::Tensor indices = local._indices().contiguous();  // [sparse dims, nnz], int64
  const at::Tensor values = local._values().contiguous();    // [nnz, dense sizes...]
  const int64_t nnz = local._nnz();
  c10d::AllgatherOptions gather;
  gather.timeout = opts.timeout;
  auto all_gather = [&](const at::Tensor& part) {
    std::vector<int64_t> sizes = part.sizes().vec();
    sizes[0] *= size_;
    at::Tensor out = at::empty(sizes, part.options());
    at::Tensor in = part;
    _allgather_base(out, in, gather)->wait();
    return out;
  };

  // Each rank's nnz, then its indices and values padded to the largest. The padding is
  // never read: each rank's part is cut to its own count below.
  const at::Tensor counts = all_gather(at::full({1}, nnz, at::kLong));
  const int64_t most = counts.max().item<int64_t>();
  auto done = [&] {
    auto work = c10::make_intrusive<WeftWork>(rank_, c10d::OpType::ALLREDUCE, nullptr,
                                              std::vector<at::Tensor>{t});
    work->Complete(nullptr);
    return work;
  };
  if (most == 0) {  // every rank's tensor is empty: so is the sum
    t.copy_(local);
    return done();
  }
  const int64_t sparse_dims = indices.size(0);
  at::Tensor padded_indices = at::zeros({sparse_dims, most}, indices.options());
  padded_indices.narrow(1, 0, nnz).copy_(indices);
  std::vector<int64_t> value_sizes = values.sizes().vec();
  value_sizes[0] = most;
  at::Tensor padded_values = at::zeros(value_sizes, values.options());
  padded_values.narrow(0, 0, nnz).copy_(values);
  // All-gather stacks along dimension 0: indices go as [1, sparse dims, most].
  const at::Tensor all_indices =
      all_gather(padded_indices.unsqueeze(0)).view({size_, sparse_dims, most});
  const at::Tensor all_values = all_gather(padded_values);

  std::vector<at::Tensor> index_parts, value_parts;
  for (int r = 0; r < size_; ++r) {
    const int64_t n = counts[r].item<int64_t>();
    index_parts.push_back(all_indices[r].narrow(1, 0, n));
    value_parts.push_back(all_values.narrow(0, r * most, n));
  }
  at::Tensor sum = at::sparse_coo_tensor(at::cat(index_parts, 1), at::cat(value_parts, 0),
                                         t.sizes(), t.options())
                       .coalesce();
  t.copy_(sum);
  return done();
}

}  // namespace weft_torch
