// One table row per collective: how a total size maps to the call's count, the buffer
// sizes, the nccl-tests bus bandwidth factor, the in-place layout of the C API, the
// call itself, and where each received element comes from (for checking). Adding a
// collective is adding a row.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <span>
#include <string_view>

namespace weftbench {

struct CallArgs {
  const void* send;
  void* recv;
  size_t count;  // the C API's count argument
  weftDataType_t dtype;
  weftRedOp_t redop;
  int root;
  int rank;
  int nranks;
  weftComm_t comm;
};

// In-place layouts, as documented in weft.h.
enum class InPlace {
  kUnsupported,     // the API defines none (alltoall, sendrecv): reported as N/A
  kSame,            // sendbuff == recvbuff
  kSendInsideRecv,  // sendbuff == recvbuff + rank*count (allgather, gather)
  kRecvInsideSend,  // recvbuff == sendbuff + rank*count (reducescatter, scatter)
};

// Where element j of a rank's receive buffer comes from.
struct Source {
  enum Kind {
    kUnchecked,  // not defined on this rank (e.g. reduce/gather at a non-root)
    kOne,        // element `index` of rank `rank`'s send buffer
    kReduced,    // element `index` of every rank's send buffer, reduced with the redop
  } kind;
  int rank;
  size_t index;
};

struct Collective {
  const char* name;
  bool reduces;        // takes a redop (column "redop", else "none")
  bool rooted;         // takes a root (column "root", else -1)
  // nccl-tests size semantics: S = count * typesize * (total_is_per_rank ? n : 1).
  bool total_is_per_rank;
  double (*bus_factor)(int n);          // busbw = algbw * factor
  size_t (*send_elems)(size_t count, int n);
  size_t (*recv_elems)(size_t count, int n);
  InPlace in_place;
  weftResult_t (*call)(const CallArgs& a);
  Source (*source)(int rank, int n, int root, size_t count, size_t j);
};

std::span<const Collective> Collectives();
const Collective* FindCollective(std::string_view name);

// The count for a requested total size S, rounded down so the collective divides it.
size_t CountForBytes(const Collective& c, size_t bytes, size_t typesize, int n);
// The total size S the count really moves.
size_t BytesForCount(const Collective& c, size_t count, size_t typesize, int n);

}  // namespace weftbench
