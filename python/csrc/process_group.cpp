#include "process_group.h"

#include <stdexcept>

namespace weft_torch {
namespace {

class NamedProcessGroup final : public c10d::ProcessGroup {
 public:
  using c10d::ProcessGroup::ProcessGroup;
  const std::string getBackendName() const override { return "weft"; }

  // torch's split_group and merge_remote_group make a plain ProcessGroup of the
  // backends' splits or merges; those of a weft group are named as it is.
  c10::intrusive_ptr<c10d::ProcessGroup> splitGroup(
      const std::vector<int>& ranks, const std::optional<std::chrono::milliseconds>& timeout,
      const std::optional<c10::intrusive_ptr<c10d::Backend::Options>>& opts,
      const std::optional<std::string>& name, const std::optional<std::string>& groupDesc,
      const std::optional<std::vector<c10::Device>>& devices) override {
    auto split = c10d::ProcessGroup::splitGroup(ranks, timeout, opts, name, groupDesc, devices);
    return split ? Named(*split) : split;  // null: this rank is not in the split
  }
  c10::intrusive_ptr<c10d::ProcessGroup> mergeRemoteGroup(const c10::intrusive_ptr<c10d::Store>& store,
                                                          const MergeOptions& opts,
                                                          const int& size) override {
    return Named(*c10d::ProcessGroup::mergeRemoteGroup(store, opts, size));
  }

 private:
  // `group` as a NamedProcessGroup. Every device of a weft group is weft's
  // (BackendType::CUSTOM); a split may keep a subset of them.
  static c10::intrusive_ptr<c10d::ProcessGroup> Named(c10d::ProcessGroup& group) {
    auto named = c10::make_intrusive<NamedProcessGroup>(group.getStore(), group.getRank(),
                                                        group.getSize());
    named->setBoundDeviceId(group.getBoundDeviceId());
    for (const auto& device : group.getDeviceTypes())
      named->setBackend(device.type(), BackendType::CUSTOM, group.getBackend(device.type()));
    named->setDefaultBackend(group.getBackendType());
    named->setGroupName(group.getGroupName());
    named->setGroupDesc(group.getGroupDesc());
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
