#include "comm/prepared_call.h"

#include <cstring>

#include "exec/reduce.h"

namespace weft::comm {
namespace {

using sched::Collective;

// Which buffers a rank does not own for a rooted collective (NCCL: they may be NULL or
// smaller than the full size), so the executor gets a private temporary instead.
bool OutputIsPrivate(const Call& c, int rank) {
  return (c.coll == Collective::kReduce || c.coll == Collective::kGather) && c.root != rank;
}
bool InputIsPrivate(const Call& c, int rank) {
  return c.coll == Collective::kScatter && c.root != rank;
}

}  // namespace

PreparedCall PrepareCall(const Call& call, int rank, int size, const sched::Schedule& schedule,
                         const char* algo, uint16_t kind, const char* what,
                         const std::atomic<bool>* abort) {
  PreparedCall p;
  p.call = call;
  p.schedule = &schedule;
  p.algo = algo;
  p.ctx.dtype = call.dtype;
  // The op is in every header: where the collective ignores it, ranks must not differ on it.
  p.ctx.op = Reduces(call.coll) ? call.op : RedOp::kSum;
  p.ctx.kind = kind != 0 ? kind : static_cast<uint16_t>(call.coll);
  p.ctx.root = HasRoot(call.coll) ? call.root : -1;
  p.ctx.what = what;
  p.ctx.abort = abort;

  const size_t esize = DataTypeSize(call.dtype);
  const sched::CollectiveSpec spec = SpecOf(call, rank, size);
  p.in_bytes = sched::InputCount(spec) * esize;
  p.out_bytes = sched::OutputCount(spec) * esize;
  p.scratch_bytes = schedule.scratch_count * esize;
  p.private_output = OutputIsPrivate(call, rank);
  // A non-root broadcast never reads its input; NCCL lets it be NULL.
  const bool input_unused =
      call.coll == Collective::kBroadcast && call.root != rank && call.send == nullptr;
  p.private_input = InputIsPrivate(call, rank) || input_unused;
  // In place per the NCCL convention: input is at output + InPlaceOffset elements.
  const void* output = p.private_output ? nullptr : call.recv;
  const bool in_place =
      !p.private_input && call.send != nullptr && output != nullptr &&
      static_cast<const char*>(call.send) ==
          static_cast<const char*>(output) + sched::InPlaceOffset(spec) * (long long)esize;
  p.copy_input = in_place && !schedule.inplace_safe && p.in_bytes > 0;

  if (call.op == RedOp::kAvg &&
      (call.coll == Collective::kAllReduce || call.coll == Collective::kReduceScatter ||
       (call.coll == Collective::kReduce && rank == call.root)))
    p.divide_count = sched::OutputCount(spec);
  return p;
}

Result<exec::Buffers> BuffersFor(const PreparedCall& p, const Call& call, Temporaries& temps) {
  exec::Buffers bufs{call.send, call.recv, nullptr};
  if (p.private_output) bufs.output = temps.output.Reserve(p.out_bytes);
  if (p.private_input) bufs.input = temps.input.Reserve(p.in_bytes);
  if (p.copy_input) {
    void* copy = temps.input.Reserve(p.in_bytes);
    if (copy == nullptr) return Internal("out of memory for an in-place copy");
    std::memcpy(copy, bufs.input, p.in_bytes);
    bufs.input = copy;
  }
  if (p.scratch_bytes > 0) {
    bufs.scratch = temps.scratch.Reserve(p.scratch_bytes);
    if (bufs.scratch == nullptr) return Internal("out of memory for scratch");
  }
  if ((p.out_bytes > 0 && bufs.output == nullptr) || (p.in_bytes > 0 && bufs.input == nullptr))
    return Internal("out of memory for a temporary buffer");
  return bufs;
}

void FinishCall(const PreparedCall& p, const exec::Buffers& bufs, int size) {
  if (p.divide_count > 0) exec::DivideInPlace(bufs.output, p.divide_count, p.call.dtype, size);
}

}  // namespace weft::comm
