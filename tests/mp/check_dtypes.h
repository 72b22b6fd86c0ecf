// Element types as the test sees them: name, size, precision, and conversion of one
// element to and from double. float16/bfloat16 conversions are written here (not taken
// from the library) so that the test checks the library against an independent codec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace check {

struct DTypeInfo {
  weftDataType_t type;
  const char* name;
  size_t size;
  bool is_float;
  bool is_signed;
  double eps;  // unit roundoff (half an ulp at 1.0); 0 for integers
};

const DTypeInfo& Info(weftDataType_t t);
const std::vector<weftDataType_t>& AllDTypes();
bool ParseDType(const std::string& name, weftDataType_t* out);

// base[i] = v converted to `t` (round to nearest even for floats; v must be in range).
void StoreElem(weftDataType_t t, void* base, size_t i, double v);
double LoadElem(weftDataType_t t, const void* base, size_t i);
// v as it reads back after a round trip through `t`.
double RoundTo(weftDataType_t t, double v);
// Fills `n` elements with a value no test ever expects (NaN, or the type's minimum or
// maximum), so an element the library forgot to write is caught.
void FillSentinel(weftDataType_t t, void* base, size_t n);

// Independent IEEE binary16 / bfloat16 codecs (round to nearest even).
uint16_t DoubleToHalf(double v);
double HalfToDouble(uint16_t h);
uint16_t DoubleToBf16(double v);
double Bf16ToDouble(uint16_t h);

}  // namespace check
