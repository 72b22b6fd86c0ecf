#include "process_group.h"

#include <stdexcept>

namespace weft_torch {
namespace {

class NamedProcessGroup final : public c10d::ProcessGroup {
 public:
  using c10d::ProcessGroup::ProcessGroup;
  const std::string getBackendName() const override { return "weft"; }

  // torch's split_group: torch's split makes a plain ProcessGroup from the backends'
  // splits; the split of a weft group is named as its parent is.
  c10::intrusive_ptr<c10d::ProcessGroup> splitGroup(
      const std::vector<int>& ranks, const std::optional<std::chrono::milliseconds>& timeout,
      const std::optional<c10::intrusive_ptr<c10d::Backend::Options>>& opts,
      const std::optional<std::string>& name, const std::optional<std::string>& groupDesc,
      const std::optional<std::vector<c10::Device>>& devices) override {
    auto split = c10d::ProcessGroup::splitGroup(ranks, timeout, opts, name, groupDesc, devices);
    if (!split) return split;  // this rank is not in the split
    auto named = c10::make_intrusive<NamedProcessGroup>(split->getStore(), split->getRank(),
                                                        split->getSize());
    named->setBoundDeviceId(split->getBoundDeviceId());
    // Every device of a weft group is weft's (BackendType::CUSTOM); the split keeps a subset.
    for (const auto& device : split->getDeviceTypes())
      named->setBackend(device.type(), BackendType::CUSTOM, split->getBackend(device.type()));
    named->setDefaultBackend(split->getBackendType());
    named->setGroupName(split->getGroupName());
    named->setGroupDesc(split->getGroupDesc());
    return named;
  }
};

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> WeftProcessGroup(
    const c10::intrusive_ptr<c10d::ProcessGroup>& like, int rank, int size,
    const c10::intrusive_ptr<c10d::Backend>& backend, const std::vector<std::string>& devices) {
  if (!like || !backend) throw std::invalid_argument("weft: WeftProcessGroup needs a group and a backend");
  if (devices.empty()) throw std::invalid_argument("weft: WeftProcessGroup needs at least one device");
  auto pg = c10::make_intrusive<NamedProcessGroup>(like->getStore(), rank, size);
  // Bound before the backend is registered: setBackend hands the bound device to it.
  pg->setBoundDeviceId(like->getBoundDeviceId());
  constexpr auto kCustom = c10d::ProcessGroup::BackendType::CUSTOM;
  for (const auto& device : devices) pg->setBackend(c10::Device(device).type(), kCustom, backend);
  pg->setDefaultBackend(kCustom);
  return pg;
}

}  // namespace weft_torch
