// Shared memory weft did not allocate (torch's share_memory_(), shm_open, memfds): finding
// the file behind a pointer, and a peer process mapping it.
#include "transport/shm/foreign_shared.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "transport/shm/shared_buffer.h"

namespace weft::transport::shm {
namespace {

constexpr size_t kBytes = 1 << 20;

#define SKIP_WITHOUT_DETECTION()                                                  \
  if (!ForeignSharedDetectionAvailable())                                         \
  GTEST_SKIP() << "PROCMAP_QUERY is not answered here (Linux < 6.11, or qemu-user): detection is off"

// A /dev/shm file of kBytes, mapped shared; unlinked at once unless `keep_name`. *fd is
// its descriptor (closed here when `close_fd`).
struct ShmFile {
  std::string name;
  int fd = -1;
  char* base = nullptr;
  ShmFile(bool keep_name, bool close_fd) {
    static int serial = 0;
    name = "/weft-foreign-test-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
    fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, kBytes) != 0) std::abort();
    base = static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (base == MAP_FAILED) std::abort();
    if (!keep_name) shm_unlink(name.c_str());
    if (close_fd) {
      close(fd);
      fd = -1;
    }
  }
  ~ShmFile() {
    munmap(base, kBytes);
    if (fd >= 0) close(fd);
    shm_unlink(name.c_str());
  }
};

TEST(ForeignSharedTest, FindsAnUnlinkedShmFileThroughTheDescriptorItsOwnerHolds) {
  SKIP_WITHOUT_DETECTION();
  ShmFile f(/*keep_name=*/false, /*close_fd=*/false);
  auto r = FindForeignShared(f.base + 8192, 4096);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->fd, f.fd);
  EXPECT_EQ(r->offset, 8192u);
  EXPECT_EQ(r->file_bytes, kBytes);
  // The same file keeps its number; another file gets another.
  auto again = FindForeignShared(f.base, kBytes);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id, r->id);
  ShmFile g(false, false);
  auto other = FindForeignShared(g.base, 16);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->id, r->id);
}

TEST(ForeignSharedTest, OpensANamedShmFileWhoseDescriptorWasClosed) {
  SKIP_WITHOUT_DETECTION();
  ShmFile f(/*keep_name=*/true, /*close_fd=*/true);
  auto r = FindForeignShared(f.base, kBytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  struct stat mine{}, theirs{};
  ASSERT_EQ(fstat(r->fd, &theirs), 0);
  const int check = shm_open(f.name.c_str(), O_RDONLY, 0);
  ASSERT_GE(check, 0);
  ASSERT_EQ(fstat(check, &mine), 0);
  close(check);
  EXPECT_EQ(mine.st_ino, theirs.st_ino);
}

TEST(ForeignSharedTest, RefusesWhatPeersCannotMap) {
  SKIP_WITHOUT_DETECTION();
  std::vector<char> heap(kBytes);
  EXPECT_FALSE(FindForeignShared(heap.data(), heap.size()).ok()) << "heap memory";
  int stack = 0;
  EXPECT_FALSE(FindForeignShared(&stack, sizeof stack).ok()) << "the stack";
  EXPECT_FALSE(FindForeignShared(nullptr, 8).ok());
  {
    ShmFile f(/*keep_name=*/false, /*close_fd=*/true);  // deleted, no descriptor: unreachable
    auto r = FindForeignShared(f.base, 8);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("holds no descriptor"), std::string::npos)
        << r.status().ToString();
  }
  {
    ShmFile f(false, false);
    EXPECT_FALSE(FindForeignShared(f.base + kBytes - 8, 16).ok()) << "past the mapping's end";
    // A private mapping of the same file: this process's writes would not reach it.
    void* priv = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
    ASSERT_NE(priv, MAP_FAILED);
    EXPECT_FALSE(FindForeignShared(priv, 8).ok()) << "MAP_PRIVATE";
    munmap(priv, kBytes);
  }
  // A regular file outside any tmpfs (this test's binary's directory is on disk or
  // overlay; /dev/shm is the tmpfs).
  char path[] = "/var/tmp/weft-foreign-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, kBytes), 0);
  void* disk = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(disk, MAP_FAILED);
  EXPECT_FALSE(FindForeignShared(disk, 8).ok()) << "a file on disk";
  munmap(disk, kBytes);
  close(fd);
}

// An unsealed memfd the caller made is a tmpfs file like any other.
TEST(ForeignSharedTest, FindsAMemfdMappedShared) {
  SKIP_WITHOUT_DETECTION();
  const int fd = memfd_create("caller", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, kBytes), 0);
  char* base =
      static_cast<char*>(mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(base, MAP_FAILED);
  auto r = FindForeignShared(base + 100, 100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->fd, fd);
  EXPECT_EQ(r->offset, 100u);
  munmap(base, kBytes);
  close(fd);
}

// After fork the child asks about its own address space, not the parent's.
TEST(ForeignSharedTest, AForkedChildQueriesItsOwnMappings) {
  SKIP_WITHOUT_DETECTION();
  void* anon = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  ASSERT_FALSE(FindForeignShared(anon, 8).ok());  // opens the parent's maps
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The parent's anonymous page, replaced here by a shared file mapping.
    const int fd = memfd_create("child", 0);
    if (fd < 0 || ftruncate(fd, kBytes) != 0) _exit(2);
    void* at = mmap(anon, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (at == MAP_FAILED) _exit(3);
    _exit(FindForeignShared(at, 8).ok() ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  munmap(anon, 4096);
}

// A peer maps the owner's unsealed file as kShmFile, not as a weft memfd.
TEST(ForeignSharedTest, APeerMapsTheFileAndSeesTheOwnersBytes) {
  SKIP_WITHOUT_DETECTION();
  int to_parent[2], to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ShmFile f(false, false);
    for (size_t i = 0; i < kBytes; ++i) f.base[i] = static_cast<char>(i * 5);
    auto r = FindForeignShared(f.base, kBytes);
    int fd = r.ok() ? r->fd : -1;
    if (write(to_parent[1], &fd, sizeof fd) != sizeof fd) _exit(3);
    char go;
    if (read(to_child[0], &go, 1) != 1) _exit(4);
    _exit(f.base[10] == 77 ? 0 : 5);
  }
  int remote_fd = -1;
  ASSERT_EQ(read(to_parent[0], &remote_fd, sizeof remote_fd),
            static_cast<ssize_t>(sizeof remote_fd));
  ASSERT_GE(remote_fd, 0);
  {
    EXPECT_EQ(MapPeerBuffer(child, remote_fd, kBytes).status().code(), Code::kInvalidArgument)
        << "not sealed: refused as a weft memfd";
    EXPECT_EQ(MapPeerBuffer(child, remote_fd, kBytes * 2, Backing::kShmFile).status().code(),
              Code::kInvalidArgument)
        << "longer than the file";
    auto m = MapPeerBuffer(child, remote_fd, kBytes, Backing::kShmFile);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    auto* bytes = static_cast<char*>(m->base());
    EXPECT_EQ(bytes[3], static_cast<char>(15));
    bytes[10] = 77;
  }
  ASSERT_EQ(write(to_child[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
}

}  // namespace
}  // namespace weft::transport::shm
