// weftGroupStart / weftGroupEnd / weftGroupSimulateEnd (comm/call_group.h).
#include "comm/api_internal.h"
#include "comm/call_group.h"

extern "C" {

weftResult_t weftGroupStart(void) {
  weft::comm::CallGroup::ThisThread().Start();
  return weftSuccess;
}

weftResult_t weftGroupEnd(void) {
  weft::comm::CallGroup::Failure failure = weft::comm::CallGroup::ThisThread().End();
  if (failure.status.ok()) return weftSuccess;
  // Recorded on the failed call's communicator and, as weftGroupEnd names none, for
  // weftGetLastError(NULL) on this thread.
  if (failure.comm) failure.comm->SetLastError(failure.status);
  weft::comm::api::t_last_error = failure.status.ToString();
  return weft::comm::api::ToResult(failure.status);
}

weftResult_t weftGroupSimulateEnd(double* estimated_us) {
  if (estimated_us == nullptr) {
    weft::comm::api::t_last_error = "InvalidArgument: weftGroupSimulateEnd: estimated_us is NULL";
    return weftInvalidArgument;
  }
  weft::comm::CallGroup::Failure failure =
      weft::comm::CallGroup::ThisThread().SimulateEnd(estimated_us);
  if (failure.status.ok()) return weftSuccess;
  if (failure.comm) failure.comm->SetLastError(failure.status);
  weft::comm::api::t_last_error = failure.status.ToString();
  return weft::comm::api::ToResult(failure.status);
}

}  // extern "C"
