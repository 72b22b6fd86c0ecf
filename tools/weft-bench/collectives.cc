#include "collectives.h"

#include <array>

namespace weftbench {
namespace {

double One(int) { return 1.0; }
double AllReduceFactor(int n) { return 2.0 * (n - 1) / n; }
double PerRankFactor(int n) { return static_cast<double>(n - 1) / n; }

size_t Count(size_t count, int) { return count; }
size_t CountTimesN(size_t count, int n) { return count * static_cast<size_t>(n); }

// Ring: send to the next rank, receive from the previous, both posted before either is
// waited for, so a library that progresses requests concurrently cannot deadlock. Even
// ranks post the send first and odd ranks the receive, so that a library that runs a
// communicator's requests one at a time in issue order (with sends that wait for
// their receiver) cannot deadlock either: every send then meets a posted receive.
weftResult_t SendRecvRing(const CallArgs& a) {
  const int next = (a.rank + 1) % a.nranks;
  const int prev = (a.rank + a.nranks - 1) % a.nranks;
  weftRequest_t send_req = nullptr, recv_req = nullptr;
  auto post_send = [&] { return weftISend(a.send, a.count, a.dtype, next, a.comm, &send_req); };
  auto post_recv = [&] { return weftIRecv(a.recv, a.count, a.dtype, prev, a.comm, &recv_req); };
  const bool send_first = a.rank % 2 == 0;
  // On failure a request may stay posted: the caller reports the error and exits.
  weftResult_t r = send_first ? post_send() : post_recv();
  if (r != weftSuccess) return r;
  r = send_first ? post_recv() : post_send();
  if (r != weftSuccess) return r;
  const weftResult_t rs = weftWait(send_req);
  const weftResult_t rr = weftWait(recv_req);
  return rs != weftSuccess ? rs : rr;
}

const std::array<Collective, 9> kCollectives = {{
    {"allreduce", true, false, false, AllReduceFactor, Count, Count, InPlace::kSame,
     [](const CallArgs& a) {
       return weftAllReduce(a.send, a.recv, a.count, a.dtype, a.redop, a.comm);
     },
     [](int, int, int, size_t, size_t j) { return Source{Source::kReduced, 0, j}; }},

    {"reduce", true, true, false, One, Count, Count, InPlace::kSame,
     [](const CallArgs& a) {
       return weftReduce(a.send, a.recv, a.count, a.dtype, a.redop, a.root, a.comm);
     },
     [](int rank, int, int root, size_t, size_t j) {
       return rank == root ? Source{Source::kReduced, 0, j} : Source{Source::kUnchecked, 0, 0};
     }},

    {"broadcast", false, true, false, One, Count, Count, InPlace::kSame,
     [](const CallArgs& a) {
       return weftBroadcast(a.send, a.recv, a.count, a.dtype, a.root, a.comm);
     },
     [](int, int, int root, size_t, size_t j) { return Source{Source::kOne, root, j}; }},

    {"allgather", false, false, true, PerRankFactor, Count, CountTimesN,
     InPlace::kSendInsideRecv,
     [](const CallArgs& a) { return weftAllGather(a.send, a.recv, a.count, a.dtype, a.comm); },
     [](int, int, int, size_t count, size_t j) {
       return Source{Source::kOne, static_cast<int>(j / count), j % count};
     }},

    {"reducescatter", true, false, true, PerRankFactor, CountTimesN, Count,
     InPlace::kRecvInsideSend,
     [](const CallArgs& a) {
       return weftReduceScatter(a.send, a.recv, a.count, a.dtype, a.redop, a.comm);
     },
     [](int rank, int, int, size_t count, size_t j) {
       return Source{Source::kReduced, 0, static_cast<size_t>(rank) * count + j};
     }},

    {"alltoall", false, false, true, PerRankFactor, CountTimesN, CountTimesN,
     InPlace::kUnsupported,
     [](const CallArgs& a) { return weftAllToAll(a.send, a.recv, a.count, a.dtype, a.comm); },
     [](int rank, int, int, size_t count, size_t j) {
       return Source{Source::kOne, static_cast<int>(j / count),
                     static_cast<size_t>(rank) * count + j % count};
     }},

    {"gather", false, true, true, PerRankFactor, Count, CountTimesN, InPlace::kSendInsideRecv,
     [](const CallArgs& a) {
       return weftGather(a.send, a.recv, a.count, a.dtype, a.root, a.comm);
     },
     [](int rank, int, int root, size_t count, size_t j) {
       return rank == root ? Source{Source::kOne, static_cast<int>(j / count), j % count}
                           : Source{Source::kUnchecked, 0, 0};
     }},

    {"scatter", false, true, true, PerRankFactor, CountTimesN, Count, InPlace::kRecvInsideSend,
     [](const CallArgs& a) {
       return weftScatter(a.send, a.recv, a.count, a.dtype, a.root, a.comm);
     },
     [](int rank, int, int root, size_t count, size_t j) {
       return Source{Source::kOne, root, static_cast<size_t>(rank) * count + j};
     }},

    {"sendrecv", false, false, false, One, Count, Count, InPlace::kUnsupported, SendRecvRing,
     [](int rank, int n, int, size_t, size_t j) {
       return Source{Source::kOne, (rank + n - 1) % n, j};
     }},
}};

}  // namespace

std::span<const Collective> Collectives() { return kCollectives; }

const Collective* FindCollective(std::string_view name) {
  for (const auto& c : kCollectives)
    if (name == c.name) return &c;
  return nullptr;
}

size_t CountForBytes(const Collective& c, size_t bytes, size_t typesize, int n) {
  const size_t unit = typesize * (c.total_is_per_rank ? static_cast<size_t>(n) : 1);
  return bytes / unit;
}

size_t BytesForCount(const Collective& c, size_t count, size_t typesize, int n) {
  return count * typesize * (c.total_is_per_rank ? static_cast<size_t>(n) : 1);
}

}  // namespace weftbench
