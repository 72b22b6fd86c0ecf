#include "comm/call_group.h"

#include "core/deadline.h"

namespace weft::comm {

CallGroup& CallGroup::ThisThread() {
  thread_local CallGroup group;
  return group;
}

void CallGroup::Defer(std::shared_ptr<Communicator> comm, std::shared_ptr<Request> request) {
  deferred_.push_back({std::move(comm), std::move(request)});
}

CallGroup::Failure CallGroup::End() {
  if (depth_ == 0) {
    return {InvalidUsage("weftGroupEnd without weftGroupStart on this thread"), nullptr};
  }
  if (--depth_ > 0) return {};
  std::vector<Deferred> calls;
  calls.swap(deferred_);
  Failure first;
  for (Deferred& d : calls) {
    // The call's own timeout bounds it on the worker (as weftWait's); this outer bound
    // only guards against a worker stuck behind many queued calls.
    Status st = d.request->Wait(Deadline::AfterSeconds(24 * 3600));
    if (!st.ok() && first.status.ok()) first = {std::move(st), d.comm};
  }
  return first;
}

}  // namespace weft::comm
