// registered_mixed: allreduce where some ranks' buffers are shared and registered
// (weftMemAlloc + weftCommRegister) and others' are plain, in place and out of place,
// float32 sum and int32 max; then a leak check: after deregistering, freeing and
// destroying, this process has as many fds and mapping lines as before it allocated.
// Which ranks register: WEFT_TEST_REGISTER=all|none|even. Prints "registered_mixed: ok".
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

namespace {

int CountFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

int CountMaps() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) ++n;
  return n;
}

#define CHECK_OK(call, comm)                                                                    \
  do {                                                                                          \
    weftResult_t r_ = (call);                                                                   \
    if (r_ != weftSuccess) {                                                                    \
      std::fprintf(stderr, "registered_mixed: %s failed: %s\n", #call, weftGetLastError(comm)); \
      std::exit(2);                                                                             \
    }                                                                                           \
  } while (0)

int Fail(int rank, const char* what, size_t i) {
  std::fprintf(stderr, "registered_mixed: rank %d: wrong %s at element %zu\n", rank, what, i);
  return 1;
}

// One round of calls on buffers of `count` elements; 0 when every result is right.
int RunCalls(weftComm_t comm, int rank, int size, void* in, void* out, size_t count) {
  auto* fin = static_cast<float*>(in);
  auto* fout = static_cast<float*>(out);
  for (size_t i = 0; i < count; ++i) fin[i] = static_cast<float>(rank + 1) * (i % 97);
  CHECK_OK(weftAllReduce(fin, fout, count, weftFloat32, weftSum, comm), comm);
  const float ranksum = static_cast<float>(size * (size + 1) / 2);
  for (size_t i = 0; i < count; ++i)
    if (fout[i] != ranksum * (i % 97)) return Fail(rank, "float32 sum out of place", i);
  CHECK_OK(weftAllReduce(fout, fout, count, weftFloat32, weftSum, comm), comm);
  for (size_t i = 0; i < count; ++i)
    if (fout[i] != size * ranksum * (i % 97)) return Fail(rank, "float32 sum in place", i);
  auto* iin = static_cast<int32_t*>(in);
  for (size_t i = 0; i < count; ++i) iin[i] = static_cast<int32_t>((rank * 31 + i) % 1000);
  CHECK_OK(weftAllReduce(iin, iin, count, weftInt32, weftMax, comm), comm);
  for (size_t i = 0; i < count; ++i) {
    int32_t want = 0;
    for (int r = 0; r < size; ++r) want = std::max<int32_t>(want, (r * 31 + i) % 1000);
    if (iin[i] != want) return Fail(rank, "int32 max in place", i);
  }
  return 0;
}

}  // namespace

int main() {
  weftComm_t comm = nullptr;
  CHECK_OK(weftCommInitFromEnv(&comm), nullptr);
  int rank = 0, size = 0;
  CHECK_OK(weftCommUserRank(comm, &rank), comm);
  CHECK_OK(weftCommCount(comm, &size), comm);
  const char* mode = std::getenv("WEFT_TEST_REGISTER");
  std::string which = mode ? mode : "even";
  bool shared = which == "all" || (which == "even" && rank % 2 == 0);
  // Two passes: the first warms up what the library and malloc map for themselves (scratch,
  // arenas); the second must leave fds and mappings exactly as it found them.
  int fds_before = 0, maps_before = 0;
  int wrong = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      CHECK_OK(weftBarrier(comm), comm);
      fds_before = CountFds();
      maps_before = CountMaps();
    }
    for (size_t count : {size_t{1}, size_t{1000}, size_t{65537}, size_t{1} << 20}) {
      const size_t bytes = count * sizeof(float);
      std::vector<float> plain_in, plain_out;
      void* in = nullptr;
      void* out = nullptr;
      void* handles[2] = {nullptr, nullptr};
      if (shared) {
        CHECK_OK(weftMemAlloc(&in, bytes), nullptr);
        CHECK_OK(weftMemAlloc(&out, bytes), nullptr);
        CHECK_OK(weftCommRegister(comm, in, bytes, &handles[0]), comm);
        CHECK_OK(weftCommRegister(comm, out, bytes, &handles[1]), comm);
      } else {
        plain_in.resize(count);
        plain_out.resize(count);
        in = plain_in.data();
        out = plain_out.data();
      }
      wrong += RunCalls(comm, rank, size, in, out, count);
      if (shared) {
        CHECK_OK(weftCommDeregister(comm, handles[0]), comm);
        CHECK_OK(weftCommDeregister(comm, handles[1]), comm);
        CHECK_OK(weftMemFree(in), nullptr);
        CHECK_OK(weftMemFree(out), nullptr);
      }
    }
  }
  CHECK_OK(weftBarrier(comm), comm);
  if (CountFds() != fds_before || CountMaps() != maps_before) {
    std::fprintf(stderr, "registered_mixed: rank %d: leak: fds %d -> %d, maps %d -> %d\n", rank,
                 fds_before, CountFds(), maps_before, CountMaps());
    wrong += 1;
  }
  weftCommDestroy(comm);
  if (wrong != 0) return 1;
  std::printf("registered_mixed: ok\n");
  return 0;
}
