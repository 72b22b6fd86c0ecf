#include "process_group.h"

#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

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
  // `group` as a NamedProcessGroup, with its store, rank, size, bound device, backends,
  // name and description. A split may keep a subset of the parent's devices.
  static c10::intrusive_ptr<c10d::ProcessGroup> Named(c10d::ProcessGroup& group) {
    std::vector<std::pair<c10::DeviceType, c10::intrusive_ptr<c10d::Backend>>> backends;
    for (const auto& device : group.getDeviceTypes())
      backends.emplace_back(device.type(), group.getBackend(device.type()));
    auto named = Make(group.getStore(), group.getRank(), group.getSize(),
                      group.getBoundDeviceId(), backends);
    named->setGroupName(group.getGroupName());
    named->setGroupDesc(group.getGroupDesc());
    return named;
  }

 public:
  // A group named "weft" with each device's backend registered as BackendType::CUSTOM
  // (every device of a weft group is weft's), and CUSTOM the default.
  static c10::intrusive_ptr<NamedProcessGroup> Make(
      const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
      std::optional<at::Device> bound_device,
      const std::vector<std::pair<c10::DeviceType, c10::intrusive_ptr<c10d::Backend>>>& backends) {
    auto pg = c10::make_intrusive<NamedProcessGroup>(store, rank, size);
    // Bound before the backends are registered: setBackend hands the bound device to them.
    pg->setBoundDeviceId(bound_device);
    for (const auto& [device, backend] : backends)
      pg->setBackend(device, BackendType::CUSTOM, backend);
    pg->setDefaultBackend(BackendType::CUSTOM);
    return pg;
  }
};

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> WeftProcessGroup(
    const c10::intrusive_ptr<c10d::ProcessGroup>& like, int rank, int size,
    const c10::intrusive_ptr<c10d::Backend>& backend, const std::vector<std::string>& devices) {
  if (!like || !backend) throw std::invalid_argument("weft: WeftProcessGroup needs a group and a backend");
  if (devices.empty()) throw std::invalid_argument("weft: WeftProcessGroup needs at least one device");
  std::vector<std::pair<c10::DeviceType, c10::intrusive_ptr<c10d::Backend>>> backends;
  for (const auto& device : devices) backends.emplace_back(c10::Device(device).type(), backend);
  return NamedProcessGroup::Make(like->getStore(), rank, size, like->getBoundDeviceId(), backends);
}

}  // namespace weft_torch
