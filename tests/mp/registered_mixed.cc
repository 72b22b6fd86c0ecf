// registered_mixed: allreduce of every dtype x op, in place and out of place, where some
// ranks' buffers are shared and registered (weftMemAlloc + weftCommRegister) and the
// others' plain; then a leak check: a second pass of the same calls leaves this process
// with exactly the fds and mapping lines it had before it (the first pass warms up what
// the library and malloc map for themselves). Which ranks register:
// WEFT_TEST_REGISTER=all|none|even (default even). Prints "registered_mixed: ok".
//
// Values are small integers, exact in every dtype (exact_values.h).
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "weft/weft.h"
#include "exact_values.h"
#include "../common/process_counts.h"

namespace {

using weft::testing::Expected;
using weft::testing::Input;
using weft::testing::kOpName;
using weft::testing::kTypeName;
using weft::testing::kTypeSize;
using weft::testing::Store;

using weft::testing::CountMappings;
using weft::testing::CountOpenFds;

void Check(weftResult_t r, const char* what, weftComm_t comm) {
  if (r == weftSuccess) return;
  std::fprintf(stderr, "registered_mixed: %s failed: %s\n", what, weftGetLastError(comm));
  std::exit(2);
}

// One allreduce of (dtype, op) on `count` elements; 0 when every element is right.
int RunOne(weftComm_t comm, int rank, int size, weftDataType_t t, weftRedOp_t op,
           bool in_place, void* in, void* out, size_t count) {
  for (size_t i = 0; i < count; ++i) Store(t, in, i, Input(op, rank, size, i));
  void* dst = in_place ? in : out;
  Check(weftAllReduce(in, dst, count, t, op, comm), "weftAllReduce", comm);
  std::vector<char> want(kTypeSize[t]);
  for (size_t i = 0; i < count; ++i) {
    Store(t, want.data(), 0, Expected(op, size, i));
    if (std::memcmp(static_cast<char*>(dst) + i * kTypeSize[t], want.data(), kTypeSize[t]) != 0) {
      std::fprintf(stderr, "registered_mixed: rank %d: %s %s %s count %zu: wrong element %zu\n",
                   rank, kTypeName[t], kOpName[op], in_place ? "in place" : "out of place",
                   count, i);
      return 1;
    }
  }
  return 0;
}

// Every dtype x op x placement on buffers of `count` elements, registered or plain.
int RunCount(weftComm_t comm, int rank, int size, bool shared, size_t count) {
  const size_t bytes = count * 8;
  std::vector<char> plain_in, plain_out;
  void* in = nullptr;
  void* out = nullptr;
  void* handles[2] = {nullptr, nullptr};
  if (shared) {
    Check(weftMemAlloc(&in, bytes), "weftMemAlloc", nullptr);
    Check(weftMemAlloc(&out, bytes), "weftMemAlloc", nullptr);
    Check(weftCommRegister(comm, in, bytes, &handles[0]), "weftCommRegister", comm);
    Check(weftCommRegister(comm, out, bytes, &handles[1]), "weftCommRegister", comm);
  } else {
    plain_in.resize(bytes);
    plain_out.resize(bytes);
    in = plain_in.data();
    out = plain_out.data();
  }
  int wrong = 0;
  for (int t = 0; t < weftNumTypes; ++t)
    for (int op = 0; op < weftNumOps; ++op)
      for (bool in_place : {false, true})
        wrong += RunOne(comm, rank, size, static_cast<weftDataType_t>(t),
                        static_cast<weftRedOp_t>(op), in_place, in, out, count);
  if (shared) {
    Check(weftCommDeregister(comm, handles[0]), "weftCommDeregister", comm);
    Check(weftCommDeregister(comm, handles[1]), "weftCommDeregister", comm);
    Check(weftMemFree(in), "weftMemFree", nullptr);
    Check(weftMemFree(out), "weftMemFree", nullptr);
  }
  return wrong;
}

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  Check(weftCommInitFromEnv(&comm), "weftCommInitFromEnv", nullptr);
  int rank = 0, size = 0;
  Check(weftCommUserRank(comm, &rank), "weftCommUserRank", comm);
  Check(weftCommCount(comm, &size), "weftCommCount", comm);
  const char* mode = std::getenv("WEFT_TEST_REGISTER");
  const std::string which = mode ? mode : "even";
  const bool shared = which == "all" || (which == "even" && rank % 2 == 0);
  int wrong = 0;
  int fds_before = 0, maps_before = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      Check(weftBarrier(comm), "weftBarrier", comm);
      fds_before = CountOpenFds();
      maps_before = CountMappings();
    }
    for (size_t count : {size_t{1}, size_t{1000}, size_t{65537}})
      wrong += RunCount(comm, rank, size, shared, count);
  }
  Check(weftBarrier(comm), "weftBarrier", comm);
  if (CountOpenFds() != fds_before || CountMappings() != maps_before) {
    std::fprintf(stderr, "registered_mixed: rank %d: leak: fds %d -> %d, maps %d -> %d\n", rank,
                 fds_before, CountOpenFds(), maps_before, CountMappings());
    wrong += 1;
  }
  weftCommDestroy(comm);
  if (wrong != 0) return 1;
  std::printf("registered_mixed: ok\n");
  return 0;
}
