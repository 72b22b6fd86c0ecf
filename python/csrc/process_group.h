// The ProcessGroup that torch.distributed returns for a group that runs on weft alone.
#pragma once

#include <vector>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

namespace weft_torch {

// torch names a ProcessGroup after its default backend's BackendType, and every
// out-of-tree backend's type is CUSTOM: pg.name() and DDP's logging ("backend_name") say
// "custom" where gloo's groups say "gloo". This group says "weft" and is otherwise torch's
// own: collectives dispatch through torch's ops to the registered backend. Its
// split_group and merge_remote_group groups are named "weft" too.
//
// Made from `like` (the ProcessGroup torch built for the group: its store and bound
// device), with `backend` registered as BackendType::CUSTOM for each of `devices` and
// CUSTOM as the default. rank and size are given because `like` has no backend to ask.
c10::intrusive_ptr<c10d::ProcessGroup> WeftProcessGroup(
    const c10::intrusive_ptr<c10d::ProcessGroup>& like, int rank, int size,
    const c10::intrusive_ptr<c10d::Backend>& backend, const std::vector<std::string>& devices);

}  // namespace weft_torch
