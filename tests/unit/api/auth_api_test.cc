// The unique id carries the job's secret: a rank holding an id whose secret was changed
// cannot join (the store refuses it, and it refuses the store), and the error says so.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "weft/weft.h"

namespace {

TEST(AuthApiTest, UniqueIdWithAnotherSecretCannotJoin) {
  weftUniqueId id;
  ASSERT_EQ(weftGetUniqueId(&id), weftSuccess);
  std::string text(id.internal, strnlen(id.internal, sizeof(id.internal)));
  ASSERT_EQ(text.rfind("weft-id-2 ", 0), 0u) << text;
  // The secret is the last field; change its last hex digit.
  weftUniqueId tampered = id;
  char& last = tampered.internal[text.size() - 1];
  last = last == '0' ? '1' : '0';
  weftComm_t comm = nullptr;
  EXPECT_NE(weftCommInitRank(&comm, 1, tampered, 0), weftSuccess);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("does not hold this job's key"),
            std::string::npos)
      << weftGetLastError(nullptr);
  // The genuine id still works (one rank: the store and a barrier).
  ASSERT_EQ(weftCommInitRank(&comm, 1, id, 0), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(weftBarrier(comm), weftSuccess);
  weftCommDestroy(comm);
}

}  // namespace
