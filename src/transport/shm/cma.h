// Single-copy transfers between processes on one host through cross-memory attach
// (process_vm_readv): for a large message the sender puts only the address of its
// buffer in the ring and the receiver copies the payload straight from the sender's
// memory into its own — one copy instead of two through the ring. Linux allows it
// between processes of the same user unless ptrace is restricted (Yama ptrace_scope,
// containers without CAP_SYS_PTRACE); a probe at connection time decides per pair, and
// the ring path stays the fallback.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace weft::transport::shm {

// Messages of at least this many bytes go single-copy (WEFT_SHM_CMA_THRESHOLD; 0 turns
// single-copy off). Off by default: measured on the 2-core VMs this project runs on
// (docs/BENCHMARKS.md, "Single copy against the ring"), every collective from 256 KiB
// to 16 MiB was as fast or faster through the ring, most by 1.3-2.6x, at 2 and at 4
// ranks. The single copy saves a copy but pays for it: the kernel pins every 4 KiB page
// of the peer's buffer (a fifth of the profile), copies without vector registers, and
// leaves the whole copy to the receiving core, where the ring splits it between both
// cores and stages it through a few MiB that stay in the shared cache.
inline constexpr uint64_t kDefaultCmaThreshold = 0;
Result<uint64_t> CmaThresholdFromEnv();

// A receive consumed as it lands is delivered in pieces of at most this size, one per
// Progress() pass: read single-copy (RecvOp::incremental), so each piece is still in this
// core's L2 (1 MiB here) when the reduction reads it back; or handed over in the ring
// (RecvOp::consume), so the other links of the round keep moving while it is reduced.
// Measured in docs/BENCHMARKS.md.
inline constexpr uint64_t kIncrementalPieceBytes = 256 << 10;

// The address of a word in this process holding kCmaProbeValue, for the peer's probe.
uint64_t CmaProbeAddress();
// Whether this process can read `pid`'s probe word at `addr`.
bool CmaProbe(pid_t pid, uint64_t addr);

// Copies `bytes` from `remote` in process `pid` to `local`. Errors: Unavailable if the
// process is gone, SystemError if not permitted, ProtocolError for a bad address.
Status CmaRead(pid_t pid, uint64_t remote, void* local, size_t bytes);

}  // namespace weft::transport::shm
