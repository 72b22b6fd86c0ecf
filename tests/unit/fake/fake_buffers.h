// What the fake tests share: the fake made the process's device before main, and int32
// device buffers written and read through it.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <vector>

#include "gpu/fake_device.h"

namespace weft::gpu::testing {

// Before main, so the process's device is the fake from the first look.
inline const int kFakeOn = (setenv("WEFT_FAKE_DEVICE", "1", 1), 0);

inline FakeDevice& Fake() {
  FakeDevice* f = ActiveFake();
  if (f == nullptr) ADD_FAILURE() << "WEFT_FAKE_DEVICE=1 did not make the fake active";
  return *f;
}

// A device buffer of `values.size()` int32 holding `values`.
inline int32_t* DeviceInts(const std::vector<int32_t>& values) {
  auto p = Fake().AllocDevice(values.size() * sizeof(int32_t));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(Fake().Write(p.value(), values.data(), values.size() * sizeof(int32_t)).ok());
  return static_cast<int32_t*>(p.value());
}

inline std::vector<int32_t> HostInts(const int32_t* d, size_t n) {
  std::vector<int32_t> v(n);
  EXPECT_TRUE(Fake().Read(v.data(), d, n * sizeof(int32_t)).ok());
  return v;
}

}  // namespace weft::gpu::testing
