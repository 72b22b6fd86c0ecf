#include "transport/shm/cma.h"

#include <sys/uio.h>

#include <cerrno>

#include <fmt/format.h>

#include "core/env.h"

namespace weft::transport::shm {
namespace {
constexpr uint64_t kCmaProbeValue = 0x424f525054464557ull;  // "WEFTPROB"
const volatile uint64_t g_probe_word = kCmaProbeValue;
}  // namespace

Result<uint64_t> CmaThresholdFromEnv() {
  WEFT_ASSIGN_OR_RETURN(long long t,
                        GetEnvInt("WEFT_SHM_CMA_THRESHOLD", static_cast<long long>(kDefaultCmaThreshold)));
  if (t < 0) return InvalidArgument("WEFT_SHM_CMA_THRESHOLD must be >= 0 (0 disables)");
  return static_cast<uint64_t>(t);
}

uint64_t CmaProbeAddress() {
  return reinterpret_cast<uint64_t>(const_cast<uint64_t*>(&g_probe_word));
}

bool CmaProbe(pid_t pid, uint64_t addr) {
  uint64_t got = 0;
  iovec local{&got, sizeof(got)};
  iovec remote{reinterpret_cast<void*>(addr), sizeof(got)};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(got) && got == kCmaProbeValue;
}

Status CmaRead(pid_t pid, uint64_t remote_addr, void* local_buf, size_t bytes) {
  char* dst = static_cast<char*>(local_buf);
  size_t done = 0;
  while (done < bytes) {
    iovec local{dst + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(remote_addr + done), bytes - done};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ESRCH) return Unavailable(fmt::format("process {} is gone", pid));
      if (errno == EFAULT)
        return ProtocolError(fmt::format("process {} sent a bad buffer address", pid));
      return ErrnoStatus(fmt::format("process_vm_readv from process {}", pid), errno);
    }
    if (n == 0) return ProtocolError(fmt::format("process {}: empty single-copy read", pid));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace weft::transport::shm
