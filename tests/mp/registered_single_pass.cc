// registered_single_pass: allreduce on buffers every rank registered (weftMemAlloc +
// weftCommRegister) runs the single-pass path (docs/TRANSPORTS.md, "Registered buffers").
//
//   registered_single_pass        checks, printing "registered_single_pass: ok":
//     - every dtype x op, in place and out of place, at two counts over
//       RegisteredPath::kMinBytes (64 KiB) (one not a multiple of the world size): exact results,
//       and weftCommGetLastAlgorithm says "single_pass";
//     - a count under kMinBytes: exact, and not single_pass;
//     - rank 0's buffers plain, the others' registered: exact, and not single_pass on any
//       rank (the call falls back everywhere); then all registered again: single_pass;
//     - rank 0's buffers plain while it broadcasts: it goes on at once from each agreement
//       and may reach the next before the others have read its offer (the offers' two
//       slots, Link::SetOffer); calls on all-registered buffers between them run single_pass;
//     - in place with a count that leaves some ranks no chunk (count < size not possible
//       over kMinBytes, so uneven chunks instead) and the same buffers reused 20 times.
//   registered_single_pass kill [allreduce|allgather|broadcast]   the last rank SIGKILLs
//     itself 50-250 ms into a loop of such registered calls (allreduce by default); each
//     survivor must get an error naming it within the deadline and prints
//     "survivor rank R: named rank V: <error>". Allgather writes into the dead rank's
//     buffer and broadcast (root 0) reads rank 0's: the mapping outlives the process.
//
// Values are small integers, exact in every dtype (exact_values.h).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"
#include "exact_values.h"

namespace {

using weft::testing::Expected;
using weft::testing::Input;
using weft::testing::kOpName;
using weft::testing::kTypeName;
using weft::testing::kTypeSize;
using weft::testing::Store;

void Check(weftResult_t r, const char* what, weftComm_t comm) {
  if (r == weftSuccess) return;
  std::fprintf(stderr, "registered_single_pass: %s failed: %s\n", what,
               weftGetLastError(comm));
  std::exit(2);
}

struct Buf {
  void* in = nullptr;
  void* out = nullptr;
  void* handles[2] = {nullptr, nullptr};
  std::vector<char> plain_in, plain_out;
  bool shared = false;
  weftComm_t comm = nullptr;

  Buf(weftComm_t c, bool registered, size_t bytes) : shared(registered), comm(c) {
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
  }
  ~Buf() {
    if (!shared) return;
    Check(weftCommDeregister(comm, handles[0]), "weftCommDeregister", comm);
    Check(weftCommDeregister(comm, handles[1]), "weftCommDeregister", comm);
    Check(weftMemFree(in), "weftMemFree", nullptr);
    Check(weftMemFree(out), "weftMemFree", nullptr);
  }
};

// One allreduce; 0 when every element is right and the algorithm is (or is not, as
// `single_pass` says) the single-pass one.
int RunOne(weftComm_t comm, int rank, int size, weftDataType_t t, weftRedOp_t op,
           bool in_place, const Buf& b, size_t count, bool single_pass) {
  for (size_t i = 0; i < count; ++i) Store(t, b.in, i, Input(op, rank, size, i));
  if (!in_place) std::memset(b.out, 0x5a, count * kTypeSize[t]);
  void* dst = in_place ? b.in : b.out;
  Check(weftAllReduce(b.in, dst, count, t, op, comm), "weftAllReduce", comm);
  const char* algo = "";
  Check(weftCommGetLastAlgorithm(comm, &algo), "weftCommGetLastAlgorithm", comm);
  const char* where = in_place ? "in place" : "out of place";
  if ((std::strcmp(algo, "single_pass") == 0) != single_pass) {
    std::fprintf(stderr, "registered_single_pass: rank %d: %s %s %s count %zu ran %s (%s)\n",
                 rank, kTypeName[t], kOpName[op], where, count, algo,
                 single_pass ? "expected single_pass" : "expected another algorithm");
    return 1;
  }
  std::vector<char> want(kTypeSize[t]);
  for (size_t i = 0; i < count; ++i) {
    Store(t, want.data(), 0, Expected(op, size, i));
    if (std::memcmp(static_cast<char*>(dst) + i * kTypeSize[t], want.data(), kTypeSize[t]) != 0) {
      std::fprintf(stderr, "registered_single_pass: rank %d: %s %s %s count %zu (%s): wrong "
                   "element %zu\n", rank, kTypeName[t], kOpName[op], where, count, algo, i);
      return 1;
    }
  }
  return 0;
}

int Correctness(weftComm_t comm, int rank, int size) {
  int wrong = 0;
  // 64 Ki + 3 elements: over the threshold for every dtype, chunks of unequal sizes.
  for (size_t count : {size_t{65539}, size_t{1} << 17}) {
    Buf b(comm, true, count * 8);
    for (int t = 0; t < weftNumTypes; ++t)
      for (int op = 0; op < weftNumOps; ++op)
        for (bool in_place : {false, true})
          wrong += RunOne(comm, rank, size, static_cast<weftDataType_t>(t),
                          static_cast<weftRedOp_t>(op), in_place, b, count, true);
  }
  {  // under the threshold: the plain path, registered or not
    Buf b(comm, true, 1000 * 4);
    wrong += RunOne(comm, rank, size, weftFloat32, weftSum, false, b, 1000, false);
  }
  {  // mixed: rank 0 plain, the others registered; then all registered again
    const size_t count = 70001;
    Buf mixed(comm, rank != 0, count * 8);
    for (int t : {weftInt8, weftFloat16, weftFloat32, weftFloat64})
      for (bool in_place : {false, true})
        wrong += RunOne(comm, rank, size, static_cast<weftDataType_t>(t), weftSum, in_place,
                        mixed, count, false);
    Buf all(comm, true, count * 8);
    wrong += RunOne(comm, rank, size, weftFloat32, weftMax, false, all, count, true);
    wrong += RunOne(comm, rank, size, weftInt32, weftSum, false, mixed, count, false);
    for (int i = 0; i < 20; ++i)
      wrong += RunOne(comm, rank, size, weftInt64, weftSum, i % 2 == 0, all, count, true);
  }
  {  // a plain root runs ahead of ranks that wait for its flag
    const size_t count = 20000;  // 80 KiB of int32: over kMinBytes, fits a ring
    Buf root_plain(comm, rank != 0, count * 4);
    Buf all(comm, true, count * 4);
    for (int i = 0; i < 30; ++i) {
      if (rank != 0 && i % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      auto* data = static_cast<int32_t*>(root_plain.in);
      for (size_t k = 0; k < count; ++k) data[k] = rank == 0 ? i * 7 + static_cast<int>(k % 97) : -1;
      Check(weftBroadcast(data, data, count, weftInt32, 0, comm), "weftBroadcast", comm);
      for (size_t k = 0; k < count; ++k) {
        if (data[k] != i * 7 + static_cast<int>(k % 97)) {
          std::fprintf(stderr, "registered_single_pass: rank %d: broadcast %d from a plain root: "
                       "wrong element %zu\n", rank, i, k);
          ++wrong;
          break;
        }
      }
      if (i % 5 == 4)
        wrong += RunOne(comm, rank, size, weftInt32, weftSum, false, all, count, true);
    }
  }
  return wrong;
}

int Kill(weftComm_t comm, int rank, int size, const std::string& coll) {
  const int victim = size - 1;
  const size_t count = size_t{1} << 21;  // 8 MiB of float32 (allgather: per rank)
  Buf b(comm, true, count * 4 * static_cast<size_t>(size));
  auto call = [&]() {
    if (coll == "allgather") return weftAllGather(b.in, b.out, count, weftFloat32, comm);
    if (coll == "broadcast") return weftBroadcast(b.in, b.out, count, weftFloat32, 0, comm);
    return weftAllReduce(b.in, b.out, count, weftFloat32, weftSum, comm);
  };
  if (rank == victim) {
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50 + getpid() % 200));
      raise(SIGKILL);
    }).detach();
  }
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    if (call() == weftSuccess) continue;
    const std::string error = weftGetLastError(comm);
    std::regex named("rank " + std::to_string(victim) + "([^0-9]|$)");
    if (!std::regex_search(error, named)) {
      std::printf("FAIL rank %d: the error does not name rank %d: %s\n", rank, victim,
                  error.c_str());
      return 1;
    }
    std::printf("survivor rank %d: named rank %d: %s\n", rank, victim, error.c_str());
    return 0;
  }
  std::printf("FAIL rank %d: no error in 30 s\n", rank);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  weftComm_t comm = nullptr;
  Check(weftCommInitFromEnv(&comm), "weftCommInitFromEnv", nullptr);
  int rank = 0, size = 0;
  Check(weftCommUserRank(comm, &rank), "weftCommUserRank", comm);
  Check(weftCommCount(comm, &size), "weftCommCount", comm);
  if (argc > 1 && std::strcmp(argv[1], "kill") == 0) {
    const std::string coll = argc > 2 ? argv[2] : "allreduce";
    if (coll != "allreduce" && coll != "allgather" && coll != "broadcast") {
      std::fprintf(stderr, "registered_single_pass: kill: unknown collective '%s'\n",
                   coll.c_str());
      return 2;
    }
    const int rc = Kill(comm, rank, size, coll);
    weftCommAbort(comm);
    return rc;
  }
  const int wrong = Correctness(comm, rank, size);
  Check(weftBarrier(comm), "weftBarrier", comm);
  weftCommDestroy(comm);
  if (wrong != 0) return 1;
  std::printf("registered_single_pass: ok\n");
  return 0;
}
