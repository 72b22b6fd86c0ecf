#include "types.h"

#include <c10/util/Exception.h>

namespace weft_torch {
namespace {

const char* OpName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

}  // namespace

Reduction ToReduction(at::ScalarType type, const c10d::ReduceOp& reduce_op) {
  Reduction r{};
  switch (reduce_op.op_) {
    case c10d::ReduceOp::SUM: r.op = weftSum; break;
    case c10d::ReduceOp::AVG: r.op = weftAvg; break;
    case c10d::ReduceOp::PRODUCT: r.op = weftProd; break;
    case c10d::ReduceOp::MIN: r.op = weftMin; break;
    case c10d::ReduceOp::MAX: r.op = weftMax; break;
    default:
      TORCH_CHECK_VALUE(false, "weft does not support ReduceOp.", OpName(reduce_op.op_),
                        " (supported: SUM, AVG, PRODUCT, MIN, MAX)");
  }
  switch (type) {
    case at::kFloat: r.dtype = weftFloat32; break;
    case at::kDouble: r.dtype = weftFloat64; break;
    case at::kHalf: r.dtype = weftFloat16; break;
    case at::kBFloat16: r.dtype = weftBfloat16; break;
    case at::kChar: r.dtype = weftInt8; break;
    case at::kByte: r.dtype = weftUint8; break;
    case at::kInt: r.dtype = weftInt32; break;
    case at::kLong: r.dtype = weftInt64; break;
    case at::kUInt32: r.dtype = weftUint32; break;
    case at::kUInt64: r.dtype = weftUint64; break;
    case at::kBool:
      // A bool is one byte holding 0 or 1, so MIN/MAX/PRODUCT over uint8 are exactly
      // logical AND/OR/AND. A SUM could produce 2, which is not a bool.
      TORCH_CHECK_VALUE(r.op == weftMin || r.op == weftMax || r.op == weftProd,
                        "weft cannot reduce bool tensors with ReduceOp.",
                        OpName(reduce_op.op_), "; use MIN (logical and), MAX (logical or) "
                        "or PRODUCT, or convert to an integer dtype");
      r.dtype = weftUint8;
      break;
    default:
      TORCH_CHECK_TYPE(false, "weft cannot reduce tensors of dtype ", type,
                       " (supported: float32, float64, float16, bfloat16, int8, uint8, "
                       "int32, int64, uint32, uint64, and bool with MIN/MAX/PRODUCT)");
  }
  return r;
}

}  // namespace weft_torch
