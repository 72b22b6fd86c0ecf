// Mesh::Connect with ranks as threads of one process, over tcp (loopback) and shm.
#include "transport/mesh.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "test_util.h"
#include "transport/card.h"
#include "transport/shm/segment.h"

namespace weft::transport {
namespace {

using testing::BuildMeshes;
using testing::ExpectAllPairsExchange;
using ::testing::HasSubstr;
using testing::Header;
using testing::Pattern;
using testing::Pump;
using testing::RunRanks;
using testing::ThreadAllGather;
using testing::UniqueCommId;

MeshOptions Options(int rank, int size, uint64_t comm, TransportMode mode, double secs = 20) {
  MeshOptions o;
  o.rank = rank;
  o.size = size;
  o.comm_id = comm;
  o.mode = mode;
  o.deadline = Deadline::AfterSeconds(secs);
  return o;
}

bool AnySegmentLeft(uint64_t comm, int n) {
  for (int lo = 0; lo < n; ++lo) {
    for (int hi = lo + 1; hi < n; ++hi) {
      int fd = shm_open(shm::Segment::Name(comm, lo, hi).c_str(), O_RDONLY, 0);
      if (fd >= 0) {
        close(fd);
        return true;
      }
    }
  }
  return false;
}

class MeshExchangeTest : public ::testing::TestWithParam<std::tuple<TransportMode, int>> {};

// Every rank sends one message of each size to every other rank while receiving from
// all of them, like an all-to-all round of the executor.
TEST_P(MeshExchangeTest, AllPairsAllSizesConcurrently) {
  auto [mode, n] = GetParam();
  uint64_t comm = UniqueCommId();
  std::vector<std::unique_ptr<Mesh>> meshes = BuildMeshes(n, mode, comm);
  ASSERT_EQ(static_cast<int>(meshes.size()), n);
  for (auto& m : meshes) ASSERT_NE(m, nullptr);
  EXPECT_FALSE(AnySegmentLeft(comm, n));
  const char* want = mode == TransportMode::kTcp ? "tcp" : "shm";
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(meshes[r]->rank(), r);
    EXPECT_EQ(meshes[r]->size(), n);
    EXPECT_EQ(meshes[r]->link(r), nullptr);
    ASSERT_EQ(meshes[r]->host_ids().size(), static_cast<size_t>(n));
    EXPECT_EQ(meshes[r]->host_ids()[0], LocalHostId());
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      ASSERT_NE(meshes[r]->link(p), nullptr);
      EXPECT_STREQ(meshes[r]->link(p)->Name(), want);
      EXPECT_EQ(meshes[r]->link(p)->peer(), p);
    }
  }

  const size_t sizes[] = {0, 1, 4095, 1 << 20, 9 << 20};
  for (size_t size : sizes) {
    ExpectAllPairsExchange(meshes, size);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, MeshExchangeTest,
                         ::testing::Combine(::testing::Values(TransportMode::kTcp,
                                                              TransportMode::kShm),
                                            ::testing::Values(2, 3, 4)),
                         [](const auto& info) {
                           return std::string(TransportModeName(std::get<0>(info.param))) +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(MeshTest, AutoPicksShmOnOneHostAndSizeOneHasNoLinks) {
  auto meshes = BuildMeshes(2, TransportMode::kAuto, UniqueCommId());
  ASSERT_NE(meshes[0], nullptr);
  EXPECT_STREQ(meshes[0]->link(1)->Name(), "shm");
  EXPECT_EQ(meshes[0]->link(1)->PollFd(), -1);

  auto single = BuildMeshes(1, TransportMode::kTcp, UniqueCommId());
  ASSERT_NE(single[0], nullptr);
  EXPECT_EQ(single[0]->size(), 1);
  EXPECT_EQ(single[0]->link(0), nullptr);
}

TEST(MeshTest, TcpPeerClosingIsUnavailableNamingTheAddress) {
  auto meshes = BuildMeshes(2, TransportMode::kTcp, UniqueCommId());
  ASSERT_NE(meshes[0], nullptr);
  Link* l = meshes[0]->link(1);
  EXPECT_GE(l->PollFd(), 0);
  meshes[1].reset();
  std::vector<uint8_t> buf(16);
  RecvOp r{Header(0, 1, 0, 16), buf.data()};
  l->PostRecv(&r);
  Status st = Pump({l}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("rank 0 lost connection to rank 1 (tcp 127.0.0.1:"));
  EXPECT_THAT(st.message(), HasSubstr("): peer closed"));
}

TEST(MeshTest, ShmPeerClosingIsUnavailable) {
  auto meshes = BuildMeshes(3, TransportMode::kShm, UniqueCommId());
  ASSERT_NE(meshes[2], nullptr);
  meshes[0].reset();
  std::vector<uint8_t> buf(16);
  RecvOp r{Header(0, 1, 0, 16), buf.data()};
  meshes[2]->link(0)->PostRecv(&r);
  Status st = Pump({meshes[2]->link(0)}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kUnavailable);
  EXPECT_EQ(st.message(), "rank 2 lost connection to rank 0 (shm): peer closed");
}

TEST(MeshTest, HeaderMismatchOverTcpNamesBothCalls) {
  auto meshes = BuildMeshes(2, TransportMode::kTcp, UniqueCommId());
  ASSERT_NE(meshes[0], nullptr);
  std::vector<uint8_t> buf(4096);
  SendOp s{Header(2, 7, 0, 1024), buf.data()};
  RecvOp r{Header(0, 7, 2, 4096), buf.data()};
  meshes[1]->link(0)->PostSend(&s);
  meshes[0]->link(1)->PostRecv(&r);
  Status st = Pump({meshes[1]->link(0), meshes[0]->link(1)}, Deadline::AfterSeconds(5));
  EXPECT_EQ(st.code(), Code::kInvalidUsage);
  EXPECT_THAT(st.message(), HasSubstr("rank 0 expected allreduce seq 7 step 2 float32/sum 4096 "
                                      "bytes from rank 1, but rank 1 sent broadcast seq 7 step 0 "
                                      "float32/sum 1024 bytes"));
}

// Strangers connecting to a rank's listener (garbage, another communicator) are dropped
// and the mesh still forms.
TEST(MeshTest, ForeignConnectionsAreRejected) {
  constexpr int n = 3;
  uint64_t comm = UniqueCommId();
  ThreadAllGather gather(n);
  std::vector<net::Fd> strangers;
  std::mutex mu;
  std::vector<std::unique_ptr<Mesh>> meshes(n);
  std::vector<Status> errors(n);
  RunRanks(n, [&](int r) {
    MeshOptions o = Options(r, n, comm, TransportMode::kTcp);
    AllGatherFn inner = gather.For(r, o.deadline);
    AllGatherFn fn = inner;
    if (r == 2) {
      // Before connecting itself, rank 2 has strangers knock on rank 0's port.
      fn = [&, inner](const std::string& mine) -> Result<std::vector<std::string>> {
        WEFT_ASSIGN_OR_RETURN(auto cards, inner(mine));
        Card c0 = DecodeCard(cards[0]).value();
        net::SockAddr addr = c0.tcp.back();  // loopback
        struct Bad {
          uint32_t magic;
          uint16_t version, reserved;
          uint64_t comm;
          int32_t rank, size;
        } __attribute__((packed));
        Bad hs[] = {{0x12345678, 1, 0, comm, 2, n},      // not weft
                    {0x48544657, 1, 0, comm + 1, 2, n},  // other communicator
                    {0x48544657, 1, 0, comm, 7, n}};     // rank out of range
        for (const Bad& b : hs) {
          auto fd = net::Connect(addr, Deadline::AfterSeconds(5));
          if (!fd.ok()) return fd.status();
          if (!net::WriteFull(fd->get(), &b, sizeof(b), Deadline::AfterSeconds(5)).ok())
            return Internal("write");
          std::lock_guard<std::mutex> lock(mu);
          strangers.push_back(std::move(fd).value());
        }
        // And one that connects and says nothing at all.
        auto silent = net::Connect(addr, Deadline::AfterSeconds(5));
        if (silent.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          strangers.push_back(std::move(silent).value());
        }
        return cards;
      };
    }
    auto m = Mesh::Connect(o, fn);
    if (m.ok()) {
      meshes[r] = std::move(m).value();
    } else {
      errors[r] = m.status();
    }
  });
  for (int r = 0; r < n; ++r) ASSERT_TRUE(errors[r].ok()) << errors[r].ToString();
  std::vector<uint8_t> a = Pattern(2, 0, 100), b(100);
  SendOp s{Header(0, 1, 0, 100), a.data()};
  RecvOp rv{Header(0, 1, 0, 100), b.data()};
  meshes[2]->link(0)->PostSend(&s);
  meshes[0]->link(2)->PostRecv(&rv);
  ASSERT_TRUE(Pump({meshes[2]->link(0), meshes[0]->link(2)}, Deadline::AfterSeconds(5)).ok());
  EXPECT_EQ(a, b);
}

// Single-rank calls with made-up peer cards, for the error paths of Connect.
Result<std::unique_ptr<Mesh>> ConnectWithFakePeer(TransportMode mode, const Card& fake,
                                                  double secs) {
  MeshOptions o = Options(1, 2, fake.comm_id, mode, secs);
  return Mesh::Connect(o, [&](const std::string& mine) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{EncodeCard(fake), mine};
  });
}

Card FakeRank0(uint64_t comm, TransportMode mode) {
  Card c;
  c.rank = 0;
  c.size = 2;
  c.comm_id = comm;
  c.mode = mode;
  c.host_id = "elsewhere|0|net:[1]";
  // A port nobody listens on: 127.0.0.1:1 answers "connection refused".
  c.tcp.push_back(net::SockAddr::Parse("127.0.0.1:1").value());
  return c;
}

TEST(MeshTest, ConnectTimeoutNamesPeerAndAddress) {
  Card fake = FakeRank0(UniqueCommId(), TransportMode::kTcp);
  fake.host_id = LocalHostId();
  auto m = ConnectWithFakePeer(TransportMode::kTcp, fake, 0.3);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kDeadlineExceeded);
  EXPECT_THAT(m.status().message(),
              HasSubstr("rank 1: timed out connecting to rank 0 at 127.0.0.1:1"));
}

TEST(MeshTest, ShmModeWithARemotePeerIsInvalidArgument) {
  auto m =
      ConnectWithFakePeer(TransportMode::kShm, FakeRank0(UniqueCommId(), TransportMode::kShm), 1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("WEFT_TRANSPORT=shm, but rank 0 is on another host"));
}

#ifndef WEFT_HAVE_OFI
// MeshOptions::mode set to ofi directly (TransportModeFromEnv refuses it in this build):
// the stand-in for ofi/rail_setup.h (transport/ofi_off.cc) opens nothing and refuses.
TEST(MeshTest, OfiModeWithoutLibfabricIsInvalidArgument) {
  auto m =
      ConnectWithFakePeer(TransportMode::kOfi, FakeRank0(UniqueCommId(), TransportMode::kOfi), 1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("built without libfabric"));
}
#endif

TEST(MeshTest, RanksWithDifferentModesAreInvalidUsage) {
  auto m =
      ConnectWithFakePeer(TransportMode::kAuto, FakeRank0(UniqueCommId(), TransportMode::kTcp), 1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kInvalidUsage);
  EXPECT_THAT(
      m.status().message(),
      HasSubstr("rank 1 uses WEFT_TRANSPORT=auto (shm+tcp, no fabric) but rank 0 uses tcp"));
}

// auto resolves per rank (a fabric found or not); ranks that resolve differently must
// fail at once, naming both, not wait on different paths.
TEST(MeshTest, AutoRanksThatDisagreeOnTheFabricAreInvalidUsage) {
  if (std::filesystem::exists("/sys/class/infiniband"))
    GTEST_SKIP() << "this machine has RDMA devices: rank 1 may find a fabric itself";
  Card fake = FakeRank0(UniqueCommId(), TransportMode::kAuto);
  fake.tcp.clear();
  fake.ofi_provider = "efa";
  fake.ofi_addrs = {{1, 2, 3, 4}};
  auto m = ConnectWithFakePeer(TransportMode::kAuto, fake, 1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kInvalidUsage);
  EXPECT_THAT(m.status().message(),
              HasSubstr("rank 1 uses WEFT_TRANSPORT=auto (shm+tcp, no fabric) but rank 0 uses "
                        "auto (shm+ofi over efa)"));
}

TEST(MeshTest, MalformedCardIsProtocolErrorNamingTheRank) {
  MeshOptions o = Options(1, 2, UniqueCommId(), TransportMode::kTcp, 1);
  auto m = Mesh::Connect(o, [&](const std::string& mine) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{"hello", mine};
  });
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kProtocolError);
  EXPECT_THAT(m.status().message(), HasSubstr("rank 1: card from rank 0"));
}

TEST(MeshTest, BadOptionsAndAllGatherFailure) {
  auto m = Mesh::Connect(Options(2, 2, 1, TransportMode::kTcp), nullptr);
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  MeshOptions o = Options(0, 2, UniqueCommId(), TransportMode::kTcp, 1);
  m = Mesh::Connect(o, [](const std::string&) -> Result<std::vector<std::string>> {
    return Unavailable("store is gone");
  });
  EXPECT_EQ(m.status().code(), Code::kUnavailable);
  EXPECT_THAT(m.status().message(), HasSubstr("rank 0: exchanging transport cards: store is gone"));
}

TEST(MeshTest, TransportModeFromEnv) {
  unsetenv("WEFT_TRANSPORT");
  EXPECT_EQ(TransportModeFromEnv().value(), TransportMode::kAuto);
  setenv("WEFT_TRANSPORT", "auto", 1);
  EXPECT_EQ(TransportModeFromEnv().value(), TransportMode::kAuto);
  setenv("WEFT_TRANSPORT", "tcp", 1);
  EXPECT_EQ(TransportModeFromEnv().value(), TransportMode::kTcp);
  setenv("WEFT_TRANSPORT", "shm", 1);
  EXPECT_EQ(TransportModeFromEnv().value(), TransportMode::kShm);
  setenv("WEFT_TRANSPORT", "ofi", 1);
#ifdef WEFT_HAVE_OFI
  EXPECT_EQ(TransportModeFromEnv().value(), TransportMode::kOfi);
  setenv("WEFT_TRANSPORT", "shm+ofi", 1);
  EXPECT_EQ(TransportModeFromEnv().value(), TransportMode::kShmOfi);
#else
  EXPECT_THAT(TransportModeFromEnv().status().message(), HasSubstr("built without libfabric"));
  setenv("WEFT_TRANSPORT", "shm+ofi", 1);
  EXPECT_THAT(TransportModeFromEnv().status().message(), HasSubstr("built without libfabric"));
#endif
  setenv("WEFT_TRANSPORT", "ib", 1);
  Result<TransportMode> bad = TransportModeFromEnv();
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("auto, tcp, shm, ofi, shm+ofi"));
  unsetenv("WEFT_TRANSPORT");
}

TEST(MeshTest, LocalHostIdIncludesNetworkNamespace) {
  std::string id = LocalHostId();
  EXPECT_THAT(id, HasSubstr("|net:["));
  EXPECT_EQ(id.find(' '), std::string::npos);
  EXPECT_EQ(id, LocalHostId());
}

}  // namespace
}  // namespace weft::transport
