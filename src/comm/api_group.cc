// weftGroupStart / weftGroupEnd / weftGroupSimulateEnd (comm/call_group.h).
#include "comm/api_internal.h"
#include "comm/call_group.h"

namespace {

// A group's end names no communicator: its failure is recorded on the failed call's
// communicator and for weftGetLastError(NULL) on this thread.
weftResult_t ReportEnd(const weft::comm::CallGroup::Failure& failure) {
  if (failure.status.ok()) return weftSuccess;
  if (failure.comm) failure.comm->SetLastError(failure.status);
  weft::comm::api::t_last_error = failure.status.ToString();
  return weft::comm::api::ToResult(failure.status);
}

}  // namespace

extern "C" {

weftResult_t weftGroupStart(void) {
  weft::comm::CallGroup::ThisThread().Start();
  return weftSuccess;
}

weftResult_t weftGroupEnd(void) { return ReportEnd(weft::comm::CallGroup::ThisThread().End()); }

weftResult_t weftGroupSimulateEnd(double* estimated_us) {
  if (estimated_us == nullptr) {
    weft::comm::api::t_last_error = "InvalidArgument: weftGroupSimulateEnd: estimated_us is NULL";
    return weftInvalidArgument;
  }
  return ReportEnd(weft::comm::CallGroup::ThisThread().SimulateEnd(estimated_us));
}

}  // extern "C"
