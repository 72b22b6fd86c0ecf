// Which key a job uses (bootstrap/job_key.h).
#include "bootstrap/job_key.h"

#include <gtest/gtest.h>

namespace weft::bootstrap {
namespace {

LaunchInfo Torchrun(const std::string& host, uint16_t port) {
  LaunchInfo info;
  info.launcher = "torchrun";
  info.store_host = host;
  info.store_port = port;
  return info;
}

TEST(JobKeyTest, WeftSecretWinsOverTheJobIdentity) {
  EnvMap env = {{"WEFT_SECRET", "s3cret"}, {"TORCHELASTIC_RUN_ID", "a"}};
  EXPECT_EQ(KeyForLaunch(Torchrun("h", 1), env).bytes, KeyFromSecret("s3cret").bytes);
  EXPECT_EQ(KeyForLaunch(Torchrun("other", 2), env).bytes, KeyFromSecret("s3cret").bytes);
}

TEST(JobKeyTest, IdentityKeySeparatesJobs) {
  EnvMap a = {{"SLURM_JOB_ID", "100"}}, b = {{"SLURM_JOB_ID", "101"}};
  auto k = [](const LaunchInfo& i, const EnvMap& e) { return KeyForLaunch(i, e).bytes; };
  // Same job, every rank: the same key.
  EXPECT_EQ(k(Torchrun("node1", 29500), a), k(Torchrun("node1", 29500), a));
  // Another job id, store or port: another key.
  EXPECT_NE(k(Torchrun("node1", 29500), a), k(Torchrun("node1", 29500), b));
  EXPECT_NE(k(Torchrun("node1", 29500), a), k(Torchrun("node2", 29500), a));
  EXPECT_NE(k(Torchrun("node1", 29500), a), k(Torchrun("node1", 29501), a));
  // And never the key of a secret that happens to equal the identity text.
  EXPECT_NE(k(Torchrun("node1", 29500), a), KeyFromSecret("torchrun|node1|29500").bytes);
}

TEST(JobKeyTest, NewSecretsAreHexAndDiffer) {
  auto a = NewSecret(32), b = NewSecret(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_EQ(a->find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(*a, *b);
}

}  // namespace
}  // namespace weft::bootstrap
