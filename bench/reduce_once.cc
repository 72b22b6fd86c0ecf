// Runs one reduction kernel (dtype, op, instruction set) once over a buffer, and nothing
// else: the subject of scripts/reduce-insns.sh, which counts the guest instructions it
// executes under qemu-user (qemu's timings are not a CPU's, its instruction counts are).
//   weft_reduce_once <dtype> <op> <isa> <elements>     e.g. float16 sum neon 65536
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/types.h"
#include "exec/reduce_internal.h"

namespace {

using weft::exec::internal::ReduceIsa;

bool ParseIsa(const char* s, ReduceIsa* out) {
  for (ReduceIsa isa : weft::exec::internal::kAllReduceIsas) {
    if (std::strcmp(s, weft::exec::internal::ReduceIsaName(isa)) == 0) {
      *out = isa;
      return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <dtype> <op> <isa> <elements>\n", argv[0]);
    return 2;
  }
  auto dtype = weft::ParseDataType(argv[1]);
  auto op = weft::ParseRedOp(argv[2]);
  ReduceIsa isa;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(argv[4], &end, 10);
  if (!dtype || !op || !ParseIsa(argv[3], &isa) || *end != '\0' || n == 0 ||
      n > (1ull << 28)) {
    std::fprintf(stderr, "%s: bad dtype, op, isa or element count (1 .. 2^28)\n", argv[0]);
    return 2;
  }
  const weft::exec::ReduceFn fn = weft::exec::internal::GetReduceFnForIsa(*dtype, *op, isa);
  if (fn == nullptr) {
    std::fprintf(stderr, "%s: %s is not built or not runnable here\n", argv[0], argv[3]);
    return 1;
  }
  const size_t bytes = n * weft::DataTypeSize(*dtype);
  // Small positive values (0x3c / 0x01 bytes): finite in every dtype, so no kernel takes
  // a NaN or infinity path that others do not.
  std::vector<unsigned char> dst(bytes, 0x3c), src(bytes, 0x01);
  fn(dst.data(), src.data(), n);
  std::printf("%s %s %s %llu elements: checksum %u\n", argv[1], argv[2], argv[3], n,
              static_cast<unsigned>(dst[bytes / 2]));
  return 0;
}
