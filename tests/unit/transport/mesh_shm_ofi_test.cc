// WEFT_TRANSPORT=shm+ofi with thread ranks that pretend to live on two hosts (the card
// exchange rewrites their host ids): pairs on one "host" must get shm links, pairs across
// hosts ofi links over libfabric's tcp;ofi_rxm, and every pair must carry messages.
#ifdef WEFT_HAVE_OFI

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "test_util.h"
#include "transport/card.h"
#include "transport/mesh.h"

namespace weft::transport {
namespace {

using testing::ExpectAllPairsExchange;
using testing::RunRanks;
using testing::ThreadAllGather;
using testing::UniqueCommId;

// Host of rank r when `per_host` ranks share one.
std::string FakeHost(int r, int per_host) { return "fakehost" + std::to_string(r / per_host); }

TEST(MeshShmOfiTest, ShmInsideAHostOfiAcrossHosts) {
  setenv("WEFT_OFI_PROVIDER", "tcp;ofi_rxm", 1);
  const int n = 4, per_host = 2;
  const uint64_t comm = UniqueCommId();
  ThreadAllGather gather(n);
  std::vector<std::unique_ptr<Mesh>> meshes(n);
  std::vector<Status> errors(n);
  RunRanks(n, [&](int r) {
    MeshOptions o;
    o.rank = r;
    o.size = n;
    o.comm_id = comm;
    o.mode = TransportMode::kShmOfi;
    o.local_index = r % per_host;
    o.deadline = Deadline::AfterSeconds(20);
    AllGatherFn real = gather.For(r, o.deadline);
    auto m = Mesh::Connect(o, [&](const std::string& mine) -> Result<std::vector<std::string>> {
      Result<Card> c = DecodeCard(mine);
      if (!c.ok()) return c.status();
      c->host_id = FakeHost(r, per_host);
      return real(EncodeCard(c.value()));
    });
    if (m.ok()) {
      meshes[r] = std::move(m).value();
    } else {
      errors[r] = m.status();
    }
  });
  for (int r = 0; r < n; ++r) ASSERT_TRUE(errors[r].ok()) << errors[r].ToString();
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p) {
      if (p == r) continue;
      const bool same_host = r / per_host == p / per_host;
      EXPECT_STREQ(meshes[r]->link(p)->Name(), same_host ? "shm" : "ofi")
          << "rank " << r << " to " << p;
    }
    // The ofi domain is the link to the other hosts that link detection sees.
    std::vector<UsedLink> used = meshes[r]->UsedLinks("/nonexistent");
    ASSERT_EQ(used.size(), 1u);
    EXPECT_EQ(used[0].name.rfind("ofi:", 0), 0u) << used[0].name;
  }

  for (size_t size : {size_t{0}, size_t{1}, size_t{8192}, size_t{1} << 20}) {
    ExpectAllPairsExchange(meshes, size);
  }
}

}  // namespace
}  // namespace weft::transport

#endif  // WEFT_HAVE_OFI
