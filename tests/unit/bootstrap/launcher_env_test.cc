#include <gtest/gtest.h>

#include "bootstrap/launcher_env.h"
#include "bootstrap/slurm_hostlist.h"

namespace weft::bootstrap {
namespace {

EnvMap Torchrun() {
  return {{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}};
}

EnvMap Slurm() {
  return {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
          {"SLURM_TASKS_PER_NODE", "4(x2)"}, {"SLURM_NODEID", "1"},
          {"SLURM_JOB_NODELIST", "node[01-02]"}, {"SLURM_JOB_ID", "123456"}};
}

// Expects InvalidArgument whose message mentions `needle`.
void ExpectInvalid(const EnvMap& env, const std::string& needle) {
  auto r = DetectLaunch(env);
  ASSERT_FALSE(r.ok()) << "accepted; wanted an error about " << needle;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().ToString();
}

TEST(DetectLaunch, Weftrun) {
  auto r = DetectLaunch({{"WEFT_RANK", "0"}, {"WEFT_WORLD_SIZE", "4"}, {"WEFT_LOCAL_RANK", "0"},
                         {"WEFT_LOCAL_WORLD_SIZE", "4"}, {"WEFT_STORE_ADDR", "127.0.0.1:4000"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->launcher, "weftrun");
  EXPECT_EQ(r->world_size, 4);
  EXPECT_EQ(r->local_world_size, 4);
  EXPECT_EQ(r->store_host, "127.0.0.1");
  EXPECT_EQ(r->store_port, 4000);
  EXPECT_FALSE(r->host_store);  // weftrun serves it
}

TEST(DetectLaunch, WeftrunIpv6StoreAndPortOverride) {
  auto r = DetectLaunch({{"WEFT_RANK", "1"}, {"WEFT_WORLD_SIZE", "2"},
                         {"WEFT_STORE_ADDR", "[::1]:4000"}, {"WEFT_STORE_PORT", "4100"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->store_host, "::1");
  EXPECT_EQ(r->store_port, 4100);
  EXPECT_EQ(r->local_rank, 0);
  EXPECT_EQ(r->local_world_size, 1);
}

TEST(DetectLaunch, WeftrunWithoutStoreAddrHostsOnRankZero) {
  auto r = DetectLaunch({{"WEFT_RANK", "0"}, {"WEFT_WORLD_SIZE", "2"},
                         {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "5000"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->host_store);
}

TEST(DetectLaunch, WeftrunHalfSetIsAnError) {
  ExpectInvalid({{"WEFT_RANK", "0"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}}, "WEFT_WORLD_SIZE");
}

TEST(DetectLaunch, Torchrun) {
  auto r = DetectLaunch(Torchrun());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->launcher, "torchrun");
  EXPECT_EQ(r->rank, 3);
  EXPECT_EQ(r->world_size, 8);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 2);
  EXPECT_EQ(r->store_host, "10.0.0.1");
  EXPECT_EQ(r->store_port, 29500);
  EXPECT_FALSE(r->host_store);
}

TEST(DetectLaunch, TorchrunRankZeroHostsStore) {
  EnvMap env = Torchrun();
  env["RANK"] = "0";
  env["LOCAL_RANK"] = "0";
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->host_store);
}

TEST(DetectLaunch, TorchrunAgentStoreMovesPortByOne) {
  EnvMap env = Torchrun();
  env["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->store_port, 29501);
  env["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_EQ(DetectLaunch(env)->store_port, 29500);
  env["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  env["WEFT_STORE_PORT"] = "7000";  // an explicit port wins
  EXPECT_EQ(DetectLaunch(env)->store_port, 7000);
  env.erase("WEFT_STORE_PORT");
  env["MASTER_PORT"] = "65535";
  ExpectInvalid(env, "MASTER_PORT");
}

TEST(DetectLaunch, TorchrunWinsOverSlurm) {
  EnvMap env = Slurm();
  for (auto& [k, v] : Torchrun()) env[k] = v;
  EXPECT_EQ(DetectLaunch(env)->launcher, "torchrun");
}

TEST(DetectLaunch, StoreAddrOverridesMaster) {
  EnvMap env = Torchrun();
  env["WEFT_STORE_ADDR"] = "store.example:1234";
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->store_host, "store.example");
  EXPECT_EQ(r->store_port, 1234);
}

TEST(DetectLaunch, TorchrunErrors) {
  EnvMap env = Torchrun();
  env.erase("MASTER_PORT");
  ExpectInvalid(env, "MASTER_PORT");
  env = Torchrun();
  env.erase("MASTER_ADDR");
  ExpectInvalid(env, "MASTER_ADDR");
  env = Torchrun();
  env["RANK"] = "8";
  ExpectInvalid(env, "RANK=8");
  env = Torchrun();
  env["RANK"] = "-1";
  ExpectInvalid(env, "RANK='-1'");
  env = Torchrun();
  env["WORLD_SIZE"] = "8x";
  ExpectInvalid(env, "WORLD_SIZE='8x'");
  env = Torchrun();
  env["WORLD_SIZE"] = "0";
  ExpectInvalid(env, "WORLD_SIZE");
  env = Torchrun();
  env["LOCAL_RANK"] = "2";
  ExpectInvalid(env, "LOCAL_RANK=2");
  env = Torchrun();
  env["MASTER_PORT"] = "70000";
  ExpectInvalid(env, "MASTER_PORT");
  env = Torchrun();
  env["MASTER_PORT"] = " 29500";
  ExpectInvalid(env, "MASTER_PORT");
  env = Torchrun();
  env["WEFT_STORE_PORT"] = "abc";
  ExpectInvalid(env, "WEFT_STORE_PORT");
  env = Torchrun();
  env["LOCAL_WORLD_SIZE"] = "16";
  ExpectInvalid(env, "local world size");
  env = Torchrun();
  env.erase("LOCAL_WORLD_SIZE");
  ExpectInvalid(env, "LOCAL_WORLD_SIZE");
}

TEST(DetectLaunch, SlurmDerivesHostAndPort) {
  auto r = DetectLaunch(Slurm());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->launcher, "slurm");
  EXPECT_EQ(r->rank, 5);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 4);
  EXPECT_EQ(r->store_host, "node01");
  EXPECT_EQ(r->store_port, 20000 + 123456 % 20000);
  EXPECT_FALSE(r->host_store);
}

TEST(DetectLaunch, SlurmPrefersStepNodelistAndMaster) {
  EnvMap env = Slurm();
  env["SLURM_STEP_NODELIST"] = "gpu[7-8]";
  EXPECT_EQ(DetectLaunch(env)->store_host, "gpu7");
  env["MASTER_ADDR"] = "head";
  env["MASTER_PORT"] = "6000";
  auto r = DetectLaunch(env);
  EXPECT_EQ(r->store_host, "head");
  EXPECT_EQ(r->store_port, 6000);
}

TEST(DetectLaunch, SlurmNtasksPerNode) {
  EnvMap env = Slurm();
  env["SLURM_NTASKS_PER_NODE"] = "2";
  env["SLURM_PROCID"] = "0";
  env["SLURM_LOCALID"] = "0";
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->local_world_size, 2);
  EXPECT_TRUE(r->host_store);
}

TEST(DetectLaunch, SlurmErrors) {
  EnvMap env = Slurm();
  env.erase("SLURM_JOB_ID");
  ExpectInvalid(env, "SLURM_JOB_ID");
  env = Slurm();
  env.erase("SLURM_JOB_NODELIST");
  ExpectInvalid(env, "SLURM_JOB_NODELIST");
  env = Slurm();
  env["SLURM_JOB_NODELIST"] = "node[01-02";
  ExpectInvalid(env, "node[01-02");
  env = Slurm();
  env["SLURM_TASKS_PER_NODE"] = "4(x";
  ExpectInvalid(env, "SLURM_TASKS_PER_NODE");
  env = Slurm();
  env["SLURM_NODEID"] = "5";
  ExpectInvalid(env, "SLURM_TASKS_PER_NODE");
  env = Slurm();
  env["SLURM_JOB_ID"] = "-3";
  ExpectInvalid(env, "SLURM_JOB_ID");
}

TEST(DetectLaunch, OpenMpi) {
  EnvMap env = {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                {"WEFT_STORE_ADDR", "10.1.1.1:9999"},
                // mpirun inside an allocation: SLURM_PROCID is the daemon's index.
                {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}};
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->launcher, "openmpi");
  EXPECT_EQ(r->rank, 2);
  EXPECT_EQ(r->local_world_size, 2);
  EXPECT_EQ(r->store_host, "10.1.1.1");
  EXPECT_FALSE(r->host_store);
  env["OMPI_COMM_WORLD_RANK"] = "0";
  EXPECT_TRUE(DetectLaunch(env)->host_store);  // not weftrun: rank 0 hosts
  env.erase("WEFT_STORE_ADDR");
  ExpectInvalid(env, "no store address");
  env.erase("OMPI_COMM_WORLD_SIZE");
  ExpectInvalid(env, "OMPI_COMM_WORLD_SIZE");
}

TEST(DetectLaunch, NothingFoundListsWhatWasLookedFor) {
  ExpectInvalid({{"PATH", "/bin"}}, "WEFT_RANK");
  ExpectInvalid({{"RANK", "0"}}, "SLURM_PROCID");       // RANK alone is not torchrun
  ExpectInvalid({{"WEFT_RANK", ""}}, "OMPI_COMM_WORLD_RANK");  // empty = unset
}

TEST(DetectLaunch, StoreAddrWithoutPort) {
  EnvMap env = {{"WEFT_RANK", "0"}, {"WEFT_WORLD_SIZE", "1"}, {"WEFT_STORE_ADDR", "host"}};
  ExpectInvalid(env, "WEFT_STORE_PORT");
  env["WEFT_STORE_PORT"] = "1234";
  EXPECT_EQ(DetectLaunch(env)->store_port, 1234);
  env["WEFT_STORE_ADDR"] = "host:0";
  ExpectInvalid(env, "WEFT_STORE_ADDR");
}

TEST(FirstSlurmHost, Forms) {
  EXPECT_EQ(FirstSlurmHost("node[01-04,07],gpu5").value(), "node01");
  EXPECT_EQ(FirstSlurmHost("a-[1-3]b").value(), "a-1b");
  EXPECT_EQ(FirstSlurmHost("gpu5,node[1-2]").value(), "gpu5");
  EXPECT_EQ(FirstSlurmHost("single").value(), "single");
  EXPECT_EQ(FirstSlurmHost("n[7,3-4]").value(), "n7");
  EXPECT_EQ(FirstSlurmHost("rack[2-3]-n[001-010]").value(), "rack2-n001");
  EXPECT_EQ(FirstSlurmHost("x[0009]").value(), "x0009");
}

TEST(FirstSlurmHost, Malformed) {
  for (const char* s : {"", ",a", "n[1-2", "n]1", "n[]", "n[a-b]", "n[[1]]", "n[-3]"}) {
    auto r = FirstSlurmHost(s);
    EXPECT_FALSE(r.ok()) << "accepted '" << s << "'";
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    }
  }
}

TEST(SlurmTasksOnNode, Parses) {
  EXPECT_EQ(SlurmTasksOnNode("4", 0).value(), 4);
  EXPECT_EQ(SlurmTasksOnNode("2(x3),1", 2).value(), 2);
  EXPECT_EQ(SlurmTasksOnNode("2(x3),1", 3).value(), 1);
  EXPECT_FALSE(SlurmTasksOnNode("2(x3),1", 4).ok());
  EXPECT_FALSE(SlurmTasksOnNode("2(x0)", 0).ok());
  EXPECT_FALSE(SlurmTasksOnNode("", 0).ok());
  EXPECT_FALSE(SlurmTasksOnNode("0", 0).ok());
}

}  // namespace
}  // namespace weft::bootstrap
