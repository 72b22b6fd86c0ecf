// The cache of peers' mapped buffers: one mapping per buffer, released on request, and
// a dead peer's mapping neither faults nor leaks.
#include "transport/shm/peer_buffers.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include "../../common/process_counts.h"

namespace weft::transport::shm {
namespace {

using weft::testing::CountMappings;
using weft::testing::CountOpenFds;

constexpr size_t kBytes = 64 << 10;

// A child with two filled shared buffers, which it reports (fds) and keeps until told
// to exit.
struct Child {
  pid_t pid = -1;
  int fds[2] = {-1, -1};
  int to_child[2] = {-1, -1};

  void Start() {
    int to_parent[2];
    ASSERT_EQ(pipe(to_parent), 0);
    ASSERT_EQ(pipe(to_child), 0);
    pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int b = 0; b < 2; ++b) {
        auto p = SharedAlloc(kBytes);
        if (!p.ok()) _exit(2);
        memset(p.value(), 'a' + b, kBytes);
        int fd = FindShared(p.value(), kBytes)->fd;
        if (write(to_parent[1], &fd, sizeof fd) != sizeof fd) _exit(3);
      }
      char go;
      _exit(read(to_child[0], &go, 1) == 1 ? 0 : 4);
    }
    for (int& fd : fds)
      ASSERT_EQ(read(to_parent[0], &fd, sizeof fd), static_cast<ssize_t>(sizeof fd));
    close(to_parent[0]);
    close(to_parent[1]);
  }
  void Stop() {
    ASSERT_EQ(write(to_child[1], "x", 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(to_child[0]);
    close(to_child[1]);
  }
};

TEST(PeerBufferCacheTest, MapsEachBufferOnceAndUnmapsOnRelease) {
  Child child;
  ASSERT_NO_FATAL_FAILURE(child.Start());
  int fds_before = CountOpenFds(), maps_before = CountMappings();
  {
    PeerBufferCache cache;
    PeerBufferKey a{3, child.pid, 1}, b{3, child.pid, 2};
    auto pa = cache.Map(a, child.fds[0], kBytes);
    ASSERT_TRUE(pa.ok()) << pa.status().ToString();
    auto again = cache.Map(a, child.fds[0], kBytes);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(pa.value(), again.value());
    EXPECT_EQ(CountMappings(), maps_before + 1) << "mapped once";
    auto pb = cache.Map(b, child.fds[1], kBytes);
    ASSERT_TRUE(pb.ok());
    EXPECT_EQ(static_cast<char*>(pa.value())[kBytes - 1], 'a');
    EXPECT_EQ(static_cast<char*>(pb.value())[0], 'b');
    EXPECT_EQ(cache.Count(), 2u);
    auto bigger = cache.Map(a, child.fds[0], kBytes * 2);
    EXPECT_EQ(bigger.status().code(), Code::kInvalidArgument);
    cache.Release(a);
    cache.Release(a);
    EXPECT_EQ(cache.Count(), 1u);
    ASSERT_TRUE(cache.Map(b, child.fds[1], kBytes).ok());  // still mapped, still cached
    // Destroying the cache unmaps b.
  }
  EXPECT_EQ(CountOpenFds(), fds_before);
  EXPECT_EQ(CountMappings(), maps_before);
  child.Stop();
}

TEST(PeerBufferCacheTest, ADeadPeersMappingStaysReadableAndItsNewBuffersFailNamingIt) {
  Child child;
  ASSERT_NO_FATAL_FAILURE(child.Start());
  int maps_before = CountMappings();
  PeerBufferCache cache;
  PeerBufferKey a{5, child.pid, 1};
  auto pa = cache.Map(a, child.fds[0], kBytes);
  ASSERT_TRUE(pa.ok()) << pa.status().ToString();
  child.Stop();  // the peer is gone; its memfd lives on in our mapping (sealed: no SIGBUS)
  const char* bytes = static_cast<const char*>(pa.value());
  for (size_t i = 0; i < kBytes; i += 4096) ASSERT_EQ(bytes[i], 'a');
  auto gone = cache.Map(PeerBufferKey{5, child.pid, 2}, child.fds[1], kBytes);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kUnavailable);
  EXPECT_NE(gone.status().message().find("rank 5"), std::string::npos)
      << gone.status().message();
  cache.ReleasePeer(5);
  EXPECT_EQ(cache.Count(), 0u);
  EXPECT_EQ(CountMappings(), maps_before);
}

}  // namespace
}  // namespace weft::transport::shm
