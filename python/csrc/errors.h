// weft result codes -> torch exceptions that carry weft's own message.
#pragma once

#include <string>

#include <weft/weft.h>

namespace weft_torch {

// "weft <what> failed: <weft's detailed message> (<result name>)". The detailed message
// names the rank, the operation and the cause, so it is what a user needs to see. A
// timeout's starts "Timed out - ", as gloo's does.
std::string DescribeFailure(const char* what, weftResult_t result, weftComm_t comm);

// Throws torch's DistBackendError (torch.distributed.DistBackendError in Python, a
// RuntimeError) when `result` is not weftSuccess.
void Check(weftResult_t result, const char* what, weftComm_t comm);

[[noreturn]] void ThrowBackendError(const std::string& message);

}  // namespace weft_torch
