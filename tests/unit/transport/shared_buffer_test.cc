// Shared buffers (weftMemAlloc's memory) and mapping a peer process's buffer.
#include "transport/shm/shared_buffer.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#include "../../common/process_counts.h"

namespace weft::transport::shm {
namespace {

using weft::testing::CountMappings;
using weft::testing::CountOpenFds;

TEST(SharedBufferTest, AllocatesZeroedWritableMemoryAndFreesIt) {
  auto p = SharedAlloc(10000);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto* bytes = static_cast<unsigned char*>(p.value());
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(bytes[i], 0) << i;
  memset(bytes, 0xab, 10000);
  auto range = FindShared(bytes + 100, 200);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(range->base, p.value());
  EXPECT_EQ(range->offset, 100u);
  EXPECT_GE(range->alloc_bytes, 10000u);
  EXPECT_TRUE(SharedFree(p.value()).ok());
}

// Peers cache their mappings by the allocation's number: a buffer allocated where a
// freed one was (same address, often) must get a number of its own.
TEST(SharedBufferTest, EveryAllocationHasANumberNeverReused) {
  std::vector<uint64_t> seen;
  for (int i = 0; i < 4; ++i) {
    auto p = SharedAlloc(4096);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    auto range = FindShared(p.value(), 4096);
    ASSERT_TRUE(range.ok()) << range.status().ToString();
    EXPECT_NE(range->id, 0u);
    for (uint64_t id : seen) EXPECT_NE(range->id, id);
    seen.push_back(range->id);
    ASSERT_TRUE(SharedFree(p.value()).ok());
  }
}

TEST(SharedBufferTest, IsASealedMemfdOnlyItsOwnerMayOpen) {
  auto p = SharedAlloc(4096);
  ASSERT_TRUE(p.ok());
  auto range = FindShared(p.value(), 4096);
  ASSERT_TRUE(range.ok());
  int seals = fcntl(range->fd, F_GET_SEALS);
  EXPECT_EQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  EXPECT_NE(ftruncate(range->fd, 0), 0) << "a sealed buffer must not shrink";
  EXPECT_EQ(errno, EPERM);
  struct stat st{};
  ASSERT_EQ(fstat(range->fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(fcntl(range->fd, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_TRUE(SharedFree(p.value()).ok());
}

TEST(SharedBufferTest, BadInputIsAClearError) {
  auto zero = SharedAlloc(0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), Code::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("size is 0"), std::string::npos);

  EXPECT_EQ(SharedFree(nullptr).code(), Code::kInvalidArgument);
  int on_stack = 0;
  Status foreign = SharedFree(&on_stack);
  EXPECT_EQ(foreign.code(), Code::kInvalidArgument);
  EXPECT_NE(foreign.message().find("not returned by weftMemAlloc"), std::string::npos);

  auto p = SharedAlloc(8192);
  ASSERT_TRUE(p.ok());
  // A pointer inside a buffer is not the buffer.
  EXPECT_EQ(SharedFree(static_cast<char*>(p.value()) + 8).code(), Code::kInvalidArgument);
  auto past_end = FindShared(static_cast<char*>(p.value()) + 4096, 8192);
  EXPECT_EQ(past_end.status().code(), Code::kInvalidArgument);
  EXPECT_NE(past_end.status().message().find("run past the end"), std::string::npos);
  EXPECT_FALSE(FindShared(&on_stack, 4).ok());
  ASSERT_TRUE(SharedFree(p.value()).ok());
  Status twice = SharedFree(p.value());
  EXPECT_EQ(twice.code(), Code::kInvalidArgument);
  EXPECT_NE(twice.message().find("already freed"), std::string::npos);
  EXPECT_FALSE(FindShared(p.value(), 1).ok()) << "a freed buffer is no longer shared";
}

// A child process allocates and fills a buffer; the parent maps it through pidfd_getfd,
// checks the child's bytes, writes its own, and the child sees them.
TEST(SharedBufferTest, APeerProcessMapsTheBufferAndBothSeeEachOthersWrites) {
  int to_parent[2], to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  constexpr size_t kBytes = 1 << 20;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto p = SharedAlloc(kBytes);
    if (!p.ok()) _exit(2);
    auto* bytes = static_cast<unsigned char*>(p.value());
    for (size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<unsigned char>(i * 7);
    int fd = FindShared(bytes, kBytes)->fd;
    if (write(to_parent[1], &fd, sizeof fd) != sizeof fd) _exit(3);
    char go;
    if (read(to_child[0], &go, 1) != 1) _exit(4);
    for (size_t i = 0; i < kBytes; ++i)
      if (bytes[i] != static_cast<unsigned char>(i * 7 + 1)) _exit(5);
    _exit(SharedFree(p.value()).ok() ? 0 : 6);
  }
  int remote_fd = -1;
  ASSERT_EQ(read(to_parent[0], &remote_fd, sizeof remote_fd),
            static_cast<ssize_t>(sizeof remote_fd));
  int fds_before = CountOpenFds(), maps_before = CountMappings();
  {
    auto m = MapPeerBuffer(child, remote_fd, kBytes);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    auto* bytes = static_cast<unsigned char*>(m->base());
    for (size_t i = 0; i < kBytes; ++i) {
      ASSERT_EQ(bytes[i], static_cast<unsigned char>(i * 7)) << i;
      bytes[i] += 1;
    }
    // Asking for more than the buffer holds is refused, not a later SIGBUS.
    auto too_big = MapPeerBuffer(child, remote_fd, kBytes * 4);
    EXPECT_EQ(too_big.status().code(), Code::kInvalidArgument);
    // An fd of the child that is not a sealed memfd (its stdin) is refused too.
    EXPECT_EQ(MapPeerBuffer(child, 0, 4096).status().code(), Code::kInvalidArgument);
  }
  EXPECT_EQ(CountOpenFds(), fds_before) << "the taken fd must be closed";
  EXPECT_EQ(CountMappings(), maps_before) << "the mapping must be gone";
  ASSERT_EQ(write(to_child[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
  auto gone = MapPeerBuffer(child, remote_fd, kBytes);
  EXPECT_EQ(gone.status().code(), Code::kUnavailable) << gone.status().ToString();
}

TEST(SharedBufferTest, AllocAndFreeLeakNoFdsOrMappings) {
  int fds_before = CountOpenFds(), maps_before = CountMappings();
  size_t live_before = SharedAllocCount();
  std::vector<void*> ptrs;
  for (int i = 0; i < 50; ++i) {
    auto p = SharedAlloc(4096 * (i + 1));
    ASSERT_TRUE(p.ok());
    ptrs.push_back(p.value());
  }
  EXPECT_EQ(SharedAllocCount(), live_before + 50);
  for (void* p : ptrs) ASSERT_TRUE(SharedFree(p).ok());
  EXPECT_EQ(SharedAllocCount(), live_before);
  EXPECT_EQ(CountOpenFds(), fds_before);
  EXPECT_EQ(CountMappings(), maps_before);
}

}  // namespace
}  // namespace weft::transport::shm
