#include "errors.h"

#include <c10/util/Exception.h>

namespace weft_torch {

std::string DescribeFailure(const char* what, weftResult_t result, weftComm_t comm) {
  const char* detail = weftGetLastError(comm);
  std::string msg = std::string("weft ") + what + " failed: ";
  // Gloo's words for a timeout, which torch's own tests (and users' handlers) look for.
  if (result == weftTimeout) msg += "Timed out - ";
  msg += (detail != nullptr && detail[0] != '\0') ? detail : "(no detail)";
  msg += std::string(" (") + weftGetErrorString(result) + ")";
  return msg;
}

void ThrowBackendError(const std::string& message) {
  C10_THROW_ERROR(DistBackendError, message);
}

void Check(weftResult_t result, const char* what, weftComm_t comm) {
  if (result != weftSuccess) ThrowBackendError(DescribeFailure(what, result, comm));
}

}  // namespace weft_torch
