// weftMemAlloc / weftMemFree / weftCommRegister / weftCommDeregister through the C API.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "weft/weft.h"

namespace {

std::string LastError() { return weftGetLastError(nullptr); }

TEST(RegisterApiTest, MemAllocErrorsAreClear) {
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(weftMemAlloc(&p, 0), weftInvalidArgument);
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(LastError().find("size is 0"), std::string::npos) << LastError();
  EXPECT_EQ(weftMemAlloc(nullptr, 64), weftInvalidArgument);
  int x = 0;
  EXPECT_EQ(weftMemFree(&x), weftInvalidArgument);
  EXPECT_NE(LastError().find("not returned by weftMemAlloc"), std::string::npos);
  ASSERT_EQ(weftMemAlloc(&p, 100), weftSuccess);
  memset(p, 1, 100);
  EXPECT_EQ(weftMemFree(p), weftSuccess);
  EXPECT_EQ(weftMemFree(p), weftInvalidArgument) << "double free";
  EXPECT_NE(LastError().find("already freed"), std::string::npos);
}

TEST(RegisterApiTest, RegistrationsAreCheckedAndNameTheRank) {
  weft::testing::RunRanks(2, [](int rank, weftComm_t comm) {
    void* buf = nullptr;
    ASSERT_EQ(weftMemAlloc(&buf, 1 << 20), weftSuccess);
    void* h1 = nullptr;
    void* h2 = nullptr;
    ASSERT_EQ(weftCommRegister(comm, buf, 1 << 19, &h1), weftSuccess) << weftGetLastError(comm);
    EXPECT_NE(h1, nullptr);
    EXPECT_EQ(weftCommRegister(comm, static_cast<char*>(buf) + 4096, 4096, &h2),
              weftInvalidArgument);
    std::string err = weftGetLastError(comm);
    EXPECT_NE(err.find("rank " + std::to_string(rank)), std::string::npos) << err;
    EXPECT_NE(err.find("overlaps"), std::string::npos) << err;
    std::vector<float> plain(64);
    EXPECT_EQ(weftCommRegister(comm, plain.data(), 256, &h2), weftInvalidArgument);
    EXPECT_EQ(weftCommRegister(comm, buf, 64, nullptr), weftInvalidArgument);
    ASSERT_EQ(weftCommRegister(comm, static_cast<char*>(buf) + (1 << 19), 1 << 19, &h2),
              weftSuccess);
    // Registered buffers still work in collectives (through today's path).
    auto* f = static_cast<float*>(buf);
    for (int i = 0; i < 1000; ++i) f[i] = static_cast<float>(rank + i);
    ASSERT_EQ(weftAllReduce(f, f, 1000, weftFloat32, weftSum, comm), weftSuccess);
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(f[i], static_cast<float>(1 + 2 * i)) << i;
    EXPECT_EQ(weftCommDeregister(comm, h1), weftSuccess);
    EXPECT_EQ(weftCommDeregister(comm, h1), weftInvalidArgument);
    // h2 is left registered: destroying the communicator releases it.
    EXPECT_EQ(weftMemFree(buf), weftSuccess);
  });
}

}  // namespace
