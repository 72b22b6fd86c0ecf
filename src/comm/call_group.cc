#include "comm/call_group.h"

#include <algorithm>
#include <map>
#include <utility>

#include "comm/device_calls.h"
#include "comm/request.h"
#include "core/deadline.h"

namespace weft::comm {

CallGroup& CallGroup::ThisThread() {
  thread_local CallGroup group;
  return group;
}

void CallGroup::Defer(std::shared_ptr<Communicator> comm, const Call& call, void* stream) {
  deferred_.push_back({std::move(comm), call, stream});
}

CallGroup::Failure CallGroup::End() {
  if (depth_ == 0) {
    return {InvalidUsage("weftGroupEnd without weftGroupStart on this thread"), nullptr};
  }
  if (--depth_ > 0) return {};
  std::vector<Deferred> calls;
  calls.swap(deferred_);
  Failure first;
  auto note = [&first](Status st, const std::shared_ptr<Communicator>& comm) {
    if (!st.ok() && first.status.ok()) first = {std::move(st), comm};
  };
  std::vector<std::pair<std::shared_ptr<Communicator>, std::shared_ptr<Request>>> issued;
  {
    // One share per communicator and stream; destroyed (letting the streams go) once
    // every call is issued, so that none of them can release a stream early.
    std::map<std::pair<const Communicator*, void*>, StreamShare> shares;
    for (Deferred& d : calls) {
      StreamShare& share = shares[{d.comm.get(), d.stream}];
      auto request = d.comm->IssueInGroup(d.call, d.stream, &share);
      if (!request.ok()) {
        note(request.status(), d.comm);
      } else if (request.value() != nullptr) {
        issued.emplace_back(d.comm, std::move(request).value());
      }
    }
  }
  for (auto& [comm, request] : issued) {
    // The call's own timeout bounds it on the worker (as weftWait's); this outer bound
    // only guards against a worker stuck behind many queued calls.
    note(request->Wait(Deadline::AfterSeconds(24 * 3600)), comm);
  }
  return first;
}

CallGroup::Failure CallGroup::SimulateEnd(double* us) {
  *us = 0;
  if (depth_ == 0) {
    return {InvalidUsage("weftGroupSimulateEnd without weftGroupStart on this thread"), nullptr};
  }
  if (depth_ > 1) {
    --depth_;
    return {InvalidUsage("weftGroupSimulateEnd ends only the outermost group (this one is "
                         "nested; its calls stay for the outer group's end)"),
            nullptr};
  }
  depth_ = 0;
  std::vector<Deferred> calls;
  calls.swap(deferred_);
  // Each communicator's calls, in order of first appearance.
  std::vector<std::pair<std::shared_ptr<Communicator>, std::vector<Call>>> by_comm;
  for (Deferred& d : calls) {
    auto it = std::find_if(by_comm.begin(), by_comm.end(),
                           [&](const auto& entry) { return entry.first == d.comm; });
    if (it == by_comm.end()) it = by_comm.insert(by_comm.end(), {d.comm, {}});
    it->second.push_back(d.call);
  }
  for (auto& [comm, comm_calls] : by_comm) {
    auto one = comm->EstimateUs(comm_calls);
    if (!one.ok()) return {one.status(), comm};
    *us += one.value();
  }
  return {};
}

}  // namespace weft::comm
