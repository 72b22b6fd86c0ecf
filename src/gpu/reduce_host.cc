// The host reference of the reduction kernel, from the same element arithmetic.
#include "gpu/reduce_batches.h"
#include "gpu/reduce_math.h"

namespace weft::gpu {
namespace {

template <DataType kDt, RedOp kOp>
void Loop(void* out, const void* const* in, int n, size_t count, int divisor) {
  using T = typename Elem<kDt>::Storage;
  const T* const* ins = reinterpret_cast<const T* const*>(in);
  T* o = static_cast<T*>(out);
  for (size_t i = 0; i < count; ++i) o[i] = ReduceElement<kDt, kOp>(ins, n, i, divisor);
}

template <DataType kDt>
void ForOp(RedOp op, void* out, const void* const* in, int n, size_t count, int divisor) {
  switch (op) {
    case RedOp::kSum: return Loop<kDt, RedOp::kSum>(out, in, n, count, divisor);
    case RedOp::kProd: return Loop<kDt, RedOp::kProd>(out, in, n, count, divisor);
    case RedOp::kMin: return Loop<kDt, RedOp::kMin>(out, in, n, count, divisor);
    case RedOp::kMax: return Loop<kDt, RedOp::kMax>(out, in, n, count, divisor);
    case RedOp::kAvg: return Loop<kDt, RedOp::kAvg>(out, in, n, count, divisor);
  }
}

}  // namespace

void ReduceNHost(void* out, const void* const* in, int n, size_t count, DataType dtype, RedOp op,
                 int divisor) {
  switch (dtype) {
#define WEFT_CASE(dt) \
  case dt: return ForOp<dt>(op, out, in, n, count, divisor);
    WEFT_CASE(DataType::kInt8)
    WEFT_CASE(DataType::kUint8)
    WEFT_CASE(DataType::kInt32)
    WEFT_CASE(DataType::kUint32)
    WEFT_CASE(DataType::kInt64)
    WEFT_CASE(DataType::kUint64)
    WEFT_CASE(DataType::kFloat16)
    WEFT_CASE(DataType::kBfloat16)
    WEFT_CASE(DataType::kFloat32)
    WEFT_CASE(DataType::kFloat64)
#undef WEFT_CASE
  }
}

void ReduceBatchedHost(void* out, const void* const* in, int n, size_t count, DataType dtype,
                       RedOp op, int divisor) {
  for (const ReduceBatch& b : PlanReduceBatches(out, in, n, op, divisor))
    ReduceNHost(out, b.in, b.n, count, dtype, b.op, b.divisor);
}

}  // namespace weft::gpu
