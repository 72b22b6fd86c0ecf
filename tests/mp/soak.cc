// soak: many collectives of random kinds, sizes, dtypes and ops on every rank (the same
// sequence everywhere, from a seed), each result checked, and the resident set measured
// at 10%, 50% and 100% of the calls: weft must not err, and the resident set must not
// grow over the second half (the first half reaches the largest buffers and fills the
// schedule cache, which are bounded).
//
//   soak ITERATIONS SEED MAX_RSS_GROWTH_KIB
//
// Prints "SOAK rank R: N calls, 0 errors, rss A / B / C KiB" and exits 0, or "FAIL ..." and 1.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace {

long RssKib() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int g_rank = 0, g_size = 1;

bool Fail(const char* what, uint64_t iter, double got, double want) {
  std::printf("FAIL rank %d: call %llu %s: got %g, expected %g\n", g_rank,
              static_cast<unsigned long long>(iter), what, got, want);
  return false;
}

// One random call, checked. Values: rank r contributes r + 1, so sums, maxima and
// placements are known without a reference implementation.
template <typename T>
bool Step(std::mt19937_64& rng, uint64_t iter, weftComm_t comm, weftDataType_t dt,
          std::vector<T>& a, std::vector<T>& b) {
  const int n = g_size, me = g_rank;
  const size_t count = (rng() % 16 == 0) ? 1 + rng() % 65536 : 1 + rng() % 512;
  const int root = static_cast<int>(rng() % n);
  const bool use_max = rng() % 2;
  const weftRedOp_t op = use_max ? weftMax : weftSum;
  const T reduced = use_max ? T(n) : T(n * (n + 1) / 2);
  a.assign(count * n, T(me + 1));
  b.assign(count * n, T(-7));
  weftResult_t r;
  auto check = [&](const char* what, T got, T want) {
    return got == want || Fail(what, iter, double(got), double(want));
  };
  switch (rng() % 9) {
    case 0:
      r = weftAllReduce(a.data(), b.data(), count, dt, op, comm);
      return r == weftSuccess && check("allreduce", b[count - 1], reduced);
    case 1:
      r = weftReduce(a.data(), b.data(), count, dt, op, root, comm);
      return r == weftSuccess && (me != root || check("reduce", b[0], reduced));
    case 2:
      r = weftBroadcast(a.data(), b.data(), count, dt, root, comm);
      return r == weftSuccess && check("broadcast", b[count - 1], T(root + 1));
    case 3:
      r = weftAllGather(a.data(), b.data(), count, dt, comm);
      return r == weftSuccess && check("allgather", b[(n - 1) * count], T(n));
    case 4:
      r = weftReduceScatter(a.data(), b.data(), count, dt, op, comm);
      return r == weftSuccess && check("reducescatter", b[count - 1], reduced);
    case 5:
      r = weftAllToAll(a.data(), b.data(), count, dt, comm);
      return r == weftSuccess && check("alltoall", b[(n - 1) * count], T(n));
    case 6:
      r = weftGather(a.data(), b.data(), count, dt, root, comm);
      return r == weftSuccess && (me != root || check("gather", b[(n - 1) * count], T(n)));
    case 7: {
      weftRequest_t s, q;
      const int next = (me + 1) % n, prev = (me + n - 1) % n;
      if (weftIRecv(b.data(), count, dt, prev, comm, &q) != weftSuccess) return false;
      if (weftISend(a.data(), count, dt, next, comm, &s) != weftSuccess) return false;
      if (weftWait(s) != weftSuccess || weftWait(q) != weftSuccess) return false;
      return check("sendrecv", b[count - 1], T(prev + 1));
    }
    default:
      return weftBarrier(comm) == weftSuccess;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: soak ITERATIONS SEED MAX_RSS_GROWTH_KIB\n");
    return 2;
  }
  const uint64_t iters = std::strtoull(argv[1], nullptr, 10);
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  const long max_growth = std::strtol(argv[3], nullptr, 10);
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("FAIL init: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  weftCommUserRank(comm, &g_rank);
  weftCommCount(comm, &g_size);
  std::vector<float> af, bf;
  std::vector<int32_t> ai, bi;
  long rss_10 = 0, rss_50 = 0;
  for (uint64_t i = 0; i < iters; ++i) {
    std::mt19937_64 rng(seed * 1000003 + i);
    const bool ok = (rng() % 2) ? Step(rng, i, comm, weftFloat32, af, bf)
                                : Step(rng, i, comm, weftInt32, ai, bi);
    if (!ok) {
      std::printf("FAIL rank %d: call %llu: %s\n", g_rank, static_cast<unsigned long long>(i),
                  weftGetLastError(comm));
      return 1;
    }
    if (i + 1 == iters / 10) rss_10 = RssKib();
    if (i + 1 == iters / 2) rss_50 = RssKib();
  }
  const long rss_end = RssKib();
  weftCommDestroy(comm);
  std::printf("SOAK rank %d: %llu calls, 0 errors, rss %ld / %ld / %ld KiB at 10/50/100%%\n",
              g_rank, static_cast<unsigned long long>(iters), rss_10, rss_50, rss_end);
  if (rss_end - rss_50 > max_growth) {
    std::printf("FAIL rank %d: resident set grew by %ld KiB over the second half (limit %ld)\n",
                g_rank, rss_end - rss_50, max_growth);
    return 1;
  }
  return 0;
}
