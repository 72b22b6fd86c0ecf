#include "gpu/device.h"

#include <fmt/format.h>

#include "core/env.h"
#include "gpu/cuda_device.h"
#include "gpu/fake_device.h"

namespace weft::gpu {
namespace {

struct Active {
  Device* device = nullptr;
  FakeDevice* fake = nullptr;
  std::string why;  // when device is null
};

const Active& GetActive() {
  static const Active active = [] {
    Active a;
    const std::string fake = GetEnv("WEFT_FAKE_DEVICE").value_or("0");
    if (fake != "0" && fake != "1") {
      a.why = fmt::format("WEFT_FAKE_DEVICE='{}': expected 0 or 1", fake);
      return a;
    }
    if (fake == "1") {
      Result<FakeDevice::Options> options = FakeDevice::OptionsFromEnv();
      if (!options.ok()) {
        a.why = options.status().message();
        return a;
      }
      a.fake = new FakeDevice(options.value());  // lives for the process
      a.device = a.fake;
      return a;
    }
    a.device = CudaDeviceOrNull(&a.why);
    return a;
  }();
  return active;
}

}  // namespace

Device* ActiveDevice() { return GetActive().device; }
std::string NoDeviceReason() { return GetActive().why; }
FakeDevice* ActiveFake() { return GetActive().fake; }

}  // namespace weft::gpu
