// shrink_check: weftCommShrink across real processes, driven by shrink_test.sh under
// `weftrun --keep-going` (so the survivors of a kill run on).
//
//   shrink_check kill K    K rounds: a victim SIGKILLs itself in the middle of a loop of
//                          collectives; every survivor must get an error naming it, shrink
//                          (nExclude = 0: the dead rank is found, not told), and run every
//                          collective, checked, on the new communicator. Round 1 kills old
//                          rank 1, round 2 the last rank of the shrunk communicator.
//   shrink_check exclude   a healthy communicator shrinks with the explicit list {1}: rank 1
//                          also calls and must get weftInvalidUsage; the others run every
//                          collective on the new one, shrink that again with nothing to
//                          exclude, and then every rank uses the parent, still healthy.
//   shrink_check badargs   out of range, duplicate, everyone, a negative count, a NULL
//                          list, unknown flags: each weftInvalidArgument with its reason,
//                          and the communicator still works.
//   shrink_check storedead DIR
//                          weftGetUniqueId on rank 0 (so the store lives in rank 0's process;
//                          the id travels through DIR/id), then rank 0 dies: the survivors'
//                          shrink must fail, saying the store is gone.
//
// A rank that passes prints "PASS rank R ..." and exits 0; any check that fails prints
// "FAIL ..." and exits 1. The victims print nothing (they die).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "weft/weft.h"

namespace {

int g_old_rank = -1;  // this process's rank in the first communicator, for messages

[[noreturn]] void Fail(const std::string& what) {
  std::printf("FAIL rank %d: %s\n", g_old_rank, what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void Check(weftResult_t r, weftComm_t comm, const char* what) {
  if (r != weftSuccess)
    Fail(std::string(what) + ": " + weftGetErrorString(r) + ": " +
         weftGetLastError(comm));
}

void Expect(bool ok, const std::string& what) {
  if (!ok) Fail(what);
}

// Every collective once on `comm`, with values that depend on rank and index, each result
// compared element by element.
void RunEveryCollective(weftComm_t comm) {
  int rank = 0, n = 0;
  Check(weftCommUserRank(comm, &rank), comm, "rank");
  Check(weftCommCount(comm, &n), comm, "count");
  const size_t c = 1000;  // per rank (several messages on every algorithm)
  auto val = [](int r, size_t i) { return static_cast<int32_t>(r * 100000 + i); };
  std::vector<int32_t> in(c * n), out(c * n);

  // allreduce (int32 sum, float32 max)
  for (size_t i = 0; i < c; ++i) in[i] = val(rank, i);
  Check(weftAllReduce(in.data(), out.data(), c, weftInt32, weftSum, comm), comm, "allreduce");
  for (size_t i = 0; i < c; ++i) {
    int64_t want = 0;
    for (int r = 0; r < n; ++r) want += val(r, i);
    Expect(out[i] == want, "allreduce sum at " + std::to_string(i));
  }
  std::vector<float> fin(c, static_cast<float>(rank)), fout(c);
  Check(weftAllReduce(fin.data(), fout.data(), c, weftFloat32, weftMax, comm), comm,
        "allreduce max");
  for (size_t i = 0; i < c; ++i) Expect(fout[i] == n - 1, "allreduce max");

  // reduce to the last rank
  std::fill(out.begin(), out.end(), -1);
  Check(weftReduce(in.data(), out.data(), c, weftInt32, weftSum, n - 1, comm), comm, "reduce");
  if (rank == n - 1)
    for (size_t i = 0; i < c; ++i) {
      int64_t want = 0;
      for (int r = 0; r < n; ++r) want += val(r, i);
      Expect(out[i] == want, "reduce at " + std::to_string(i));
    }

  // broadcast from rank 1 % n
  const int broot = 1 % n;
  for (size_t i = 0; i < c; ++i) out[i] = rank == broot ? val(broot, i) : -1;
  Check(weftBroadcast(out.data(), out.data(), c, weftInt32, broot, comm), comm, "broadcast");
  for (size_t i = 0; i < c; ++i) Expect(out[i] == val(broot, i), "broadcast");

  // allgather
  Check(weftAllGather(in.data(), out.data(), c, weftInt32, comm), comm, "allgather");
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < c; ++i) Expect(out[r * c + i] == val(r, i), "allgather");

  // reducescatter: block b of every rank's input is summed into rank b's output
  for (int b = 0; b < n; ++b)
    for (size_t i = 0; i < c; ++i) in[b * c + i] = val(rank, b * c + i);
  Check(weftReduceScatter(in.data(), out.data(), c, weftInt32, weftSum, comm), comm,
        "reducescatter");
  for (size_t i = 0; i < c; ++i) {
    int64_t want = 0;
    for (int r = 0; r < n; ++r) want += val(r, rank * c + i);
    Expect(out[i] == want, "reducescatter");
  }

  // alltoall: block b goes to rank b
  for (int b = 0; b < n; ++b)
    for (size_t i = 0; i < c; ++i) in[b * c + i] = val(rank, b * 1000 + i % 1000) + b;
  Check(weftAllToAll(in.data(), out.data(), c, weftInt32, comm), comm, "alltoall");
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < c; ++i)
      Expect(out[r * c + i] == val(r, rank * 1000 + i % 1000) + rank, "alltoall");

  // gather to rank 0, scatter from rank n - 1
  for (size_t i = 0; i < c; ++i) in[i] = val(rank, i);
  Check(weftGather(in.data(), out.data(), c, weftInt32, 0, comm), comm, "gather");
  if (rank == 0)
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < c; ++i) Expect(out[r * c + i] == val(r, i), "gather");
  for (int b = 0; b < n; ++b)
    for (size_t i = 0; i < c; ++i) in[b * c + i] = val(b, i) + 7;
  Check(weftScatter(in.data(), out.data(), c, weftInt32, n - 1, comm), comm, "scatter");
  for (size_t i = 0; i < c; ++i) Expect(out[i] == val(rank, i) + 7, "scatter");

  Check(weftBarrier(comm), comm, "barrier");

  // send/recv around the ring (non-blocking both ways, so no order can deadlock)
  if (n > 1) {
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    for (size_t i = 0; i < c; ++i) in[i] = val(rank, i) ^ 0x55;
    weftRequest_t s = nullptr, r = nullptr;
    Check(weftIRecv(out.data(), c, weftInt32, prev, comm, &r), comm, "irecv");
    Check(weftISend(in.data(), c, weftInt32, next, comm, &s), comm, "isend");
    Check(weftWait(s), comm, "send");
    Check(weftWait(r), comm, "recv");
    for (size_t i = 0; i < c; ++i) Expect(out[i] == (val(prev, i) ^ 0x55), "send/recv");
  }
}

// Loops collectives until one fails; the victim kills itself meanwhile. Returns the error.
std::string LoopUntilError(weftComm_t comm, bool victim) {
  if (victim) {
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50 + std::rand() % 150));
      raise(SIGKILL);
    }).detach();
  }
  int n = 0;
  weftCommCount(comm, &n);
  std::vector<float> a(65536 * n, 1.0f), b(65536 * n);
  const auto start = std::chrono::steady_clock::now();
  for (size_t it = 0;; ++it) {
    weftResult_t r;
    switch (it % 4) {
      case 0: r = weftAllReduce(a.data(), b.data(), 1 + it % 65536, weftFloat32, weftSum, comm); break;
      case 1: r = weftAllGather(a.data(), b.data(), 1 + it % 4096, weftFloat32, comm); break;
      case 2: r = weftBroadcast(a.data(), b.data(), 4096, weftFloat32, it % n, comm); break;
      default: r = weftBarrier(comm); break;
    }
    if (r != weftSuccess) {
      if (victim) Fail(std::string("the victim got an error: ") + weftGetLastError(comm));
      return weftGetLastError(comm);
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60))
      Fail("no error 60 s into the loop");
  }
}

int KillRounds(weftComm_t comm, int rounds) {
  std::vector<int> alive;  // old ranks of the current communicator, in order
  int n0 = 0;
  weftCommCount(comm, &n0);
  for (int r = 0; r < n0; ++r) alive.push_back(r);
  std::srand(static_cast<unsigned>(getpid()));
  for (int k = 1; k <= rounds; ++k) {
    int rank = 0, n = 0;
    weftCommUserRank(comm, &rank);
    weftCommCount(comm, &n);
    const int victim = k == 1 ? 1 % n : n - 1;  // in the current communicator's ranks
    const std::string error = LoopUntilError(comm, rank == victim);
    std::regex named("rank " + std::to_string(victim) + "([^0-9]|$)");
    Expect(std::regex_search(error, named),
           "round " + std::to_string(k) + ": the error does not name the dead rank " +
               std::to_string(victim) + ": " + error);

    const auto t0 = std::chrono::steady_clock::now();
    weftComm_t next = nullptr;
    Check(weftCommShrink(comm, nullptr, 0, &next, WEFT_SHRINK_DEFAULT), comm, "shrink");
    const double shrink_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    weftCommAbort(comm);  // the failed parent: freed at once
    alive.erase(alive.begin() + victim);
    int new_rank = -1, new_n = 0;
    Check(weftCommUserRank(next, &new_rank), next, "rank");
    Check(weftCommCount(next, &new_n), next, "count");
    Expect(new_n == n - 1, "round " + std::to_string(k) + ": new size " +
                               std::to_string(new_n) + ", want " + std::to_string(n - 1));
    Expect(alive[new_rank] == g_old_rank,
           "round " + std::to_string(k) + ": new rank " + std::to_string(new_rank) +
               " is old rank " + std::to_string(alive[new_rank]) + ", not this one");
    RunEveryCollective(next);
    std::printf("round %d rank %d: shrink to %d ranks in %.0f ms, every collective checked; "
                "error was: %.300s\n",
                k, g_old_rank, new_n, shrink_ms, error.c_str());
    comm = next;
  }
  weftCommDestroy(comm);
  std::printf("PASS rank %d\n", g_old_rank);
  return 0;
}

int ExcludeOne(weftComm_t comm) {
  int n = 0;
  weftCommCount(comm, &n);
  const int exclude[] = {1};
  weftComm_t next = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  weftResult_t r = weftCommShrink(comm, exclude, 1, &next, WEFT_SHRINK_DEFAULT);
  const double shrink_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (g_old_rank == 1) {
    const std::string error = weftGetLastError(comm);
    Expect(r == weftInvalidUsage && next == nullptr,
           std::string("the excluded rank got ") + weftGetErrorString(r) + ": " + error);
    Expect(error.find("exclude list") != std::string::npos, "unclear error: " + error);
    std::printf("rank 1 (excluded) was told: %s\n", error.c_str());
  } else {
    Check(r, comm, "shrink");
    int new_rank = -1, new_n = 0;
    weftCommUserRank(next, &new_rank);
    weftCommCount(next, &new_n);
    Expect(new_n == n - 1, "new size " + std::to_string(new_n));
    Expect(new_rank == (g_old_rank == 0 ? 0 : g_old_rank - 1), "new rank " + std::to_string(new_rank));
    std::printf("rank %d: shrink of the healthy communicator to %d ranks in %.1f ms\n",
                g_old_rank, new_n, shrink_ms);
    RunEveryCollective(next);
    // A second shrink with nothing to exclude on a healthy communicator: same ranks.
    weftComm_t again = nullptr;
    Check(weftCommShrink(next, nullptr, 0, &again, WEFT_SHRINK_DEFAULT), next, "shrink again");
    int again_n = 0, again_rank = -1;
    weftCommCount(again, &again_n);
    weftCommUserRank(again, &again_rank);
    Expect(again_n == new_n && again_rank == new_rank, "the second shrink changed the ranks");
    RunEveryCollective(again);
    weftCommDestroy(again);
    weftCommDestroy(next);
  }
  // The parent was healthy and stays so: every rank, the excluded one too, uses it.
  RunEveryCollective(comm);
  weftCommDestroy(comm);
  std::printf("PASS rank %d\n", g_old_rank);
  return 0;
}

int BadArguments(weftComm_t comm) {
  int n = 0;
  weftCommCount(comm, &n);
  std::vector<int> everyone;
  for (int r = 0; r < n; ++r) everyone.push_back(r);
  struct Case {
    const char* name;
    std::vector<int> list;
    int count;
    int flags;
    const char* says;
  };
  const Case cases[] = {
      {"out of range", {n}, 1, 0, "out of range"},
      {"negative rank", {-1}, 1, 0, "out of range"},
      {"duplicate", {n - 1, n - 1}, 2, 0, "listed twice"},
      {"everyone", everyone, n, 0, "all"},
      {"negative count", {}, -1, 0, "nExclude"},
      {"NULL list", {}, 2, 0, "nExclude"},
      {"unknown flags", {}, 0, 0x80, "flags"},
  };
  for (const Case& c : cases) {
    weftComm_t next = reinterpret_cast<weftComm_t>(&n);  // must be reset to NULL
    const int* list = c.list.empty() ? nullptr : c.list.data();
    weftResult_t r = weftCommShrink(comm, list, c.count, &next, c.flags);
    const std::string error = weftGetLastError(comm);
    Expect(r == weftInvalidArgument, std::string(c.name) + ": got " + weftGetErrorString(r));
    Expect(next == nullptr, std::string(c.name) + ": newcomm not reset");
    Expect(error.find(c.says) != std::string::npos,
           std::string(c.name) + ": the error does not say '" + c.says + "': " + error);
    if (g_old_rank == 0) std::printf("%s: %s\n", c.name, error.c_str());
  }
  RunEveryCollective(comm);  // nothing was posted or broken
  weftCommDestroy(comm);
  std::printf("PASS rank %d\n", g_old_rank);
  return 0;
}

int StoreHostDies(const std::string& dir) {
  const int rank = std::atoi(std::getenv("WEFT_RANK"));
  const int n = std::atoi(std::getenv("WEFT_WORLD_SIZE"));
  g_old_rank = rank;
  weftUniqueId id;
  const std::string path = dir + "/id";
  if (rank == 0) {
    if (weftGetUniqueId(&id) != weftSuccess) Fail(std::string("id: ") + weftGetLastError(nullptr));
    std::ofstream(path + ".tmp", std::ios::binary).write(id.internal, sizeof(id.internal));
    std::rename((path + ".tmp").c_str(), path.c_str());
  } else {
    for (int i = 0;; ++i) {
      std::ifstream in(path, std::ios::binary);
      if (in && in.read(id.internal, sizeof(id.internal))) break;
      if (i > 3000) Fail("no id from rank 0 after 30 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  weftComm_t comm = nullptr;
  if (weftCommInitRank(&comm, n, id, rank) != weftSuccess)
    Fail(std::string("init: ") + weftGetLastError(nullptr));
  Check(weftBarrier(comm), comm, "barrier");
  if (rank == 0) raise(SIGKILL);  // and the store with it
  float x = 1, y = 0;
  Expect(weftAllReduce(&x, &y, 1, weftFloat32, weftSum, comm) != weftSuccess,
         "an allreduce with a dead rank succeeded");
  weftComm_t next = nullptr;
  weftResult_t r = weftCommShrink(comm, nullptr, 0, &next, WEFT_SHRINK_DEFAULT);
  const std::string error = weftGetLastError(comm);
  Expect(r != weftSuccess && next == nullptr, "shrink without a store succeeded");
  Expect(error.find("rendezvous store") != std::string::npos &&
             error.find("gone") != std::string::npos,
         "the error does not say the store is gone: " + error);
  std::printf("rank %d was told (%s): %s\n", rank, weftGetErrorString(r), error.c_str());
  weftCommAbort(comm);
  std::printf("PASS rank %d\n", rank);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "storedead" && argc == 3) return StoreHostDies(argv[2]);
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) Fail(std::string("init: ") + weftGetLastError(nullptr));
  weftCommUserRank(comm, &g_old_rank);
  if (mode == "kill" && argc == 3) return KillRounds(comm, std::atoi(argv[2]));
  if (mode == "exclude") return ExcludeOne(comm);
  if (mode == "badargs") return BadArguments(comm);
  std::fprintf(stderr, "usage: shrink_check kill K | exclude | badargs | storedead DIR\n");
  return 2;
}
