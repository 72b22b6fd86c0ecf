#include <gtest/gtest.h>

#include <set>

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
  EXPECT_EQ(r->store_port, SlurmStorePort(123456, 0));
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

// The derived port stays below Linux's default ephemeral range (32768-60999), where an
// outgoing connection's source port could already hold it, and differs per job step.
TEST(DetectLaunch, SlurmPortOutsideTheEphemeralRangeAndPerStep) {
  for (long long job : {0LL, 1LL, 1999LL, 2000LL, 123456LL, (1LL << 40) - 1}) {
    for (long long step : {0LL, 1LL, 9LL, 10LL, 4294967294LL}) {
      const uint16_t p = SlurmStorePort(job, step);
      EXPECT_GE(p, 10000) << job << "." << step;
      EXPECT_LT(p, 30000) << job << "." << step;
    }
  }
  std::set<uint16_t> steps;
  for (long long step = 0; step < 10; ++step) steps.insert(SlurmStorePort(123456, step));
  EXPECT_EQ(steps.size(), 10u);  // ten concurrent steps of one job: ten ports
  EnvMap env = Slurm();
  env["SLURM_STEP_ID"] = "3";
  EXPECT_EQ(DetectLaunch(env)->store_port, SlurmStorePort(123456, 3));
  env["SLURM_STEP_ID"] = "x";
  ExpectInvalid(env, "SLURM_STEP_ID");
}

// MPICH's and Intel MPI's Hydra mpiexec: PMI_RANK/PMI_SIZE, MPI_LOCALRANKID/MPI_LOCALNRANKS.
TEST(DetectLaunch, Mpich) {
  EnvMap env = {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "1"},
                {"MPI_LOCALNRANKS", "2"}, {"MASTER_ADDR", "head"}, {"MASTER_PORT", "7100"}};
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->launcher, "mpich");
  EXPECT_EQ(r->rank, 3);
  EXPECT_EQ(r->world_size, 4);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->local_world_size, 2);
  EXPECT_EQ(r->store_host, "head");
  EXPECT_EQ(r->store_port, 7100);
  env["PMI_RANK"] = "4";
  ExpectInvalid(env, "PMI_RANK=4 is not below PMI_SIZE=4");
  env.erase("PMI_SIZE");
  ExpectInvalid(env, "PMI_RANK is set but PMI_SIZE is not");
}

// PMIx gives the size only through its API; weft takes it from the variables beside it.
TEST(DetectLaunch, PmixRankWithSizeFromTheLauncher) {
  EnvMap env = {{"PMIX_RANK", "1"}, {"WORLD_SIZE", "2"}, {"WEFT_STORE_ADDR", "h:5000"}};
  auto r = DetectLaunch(env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->launcher, "pmix");
  EXPECT_EQ(r->rank, 1);
  EXPECT_EQ(r->world_size, 2);
  EXPECT_EQ(r->store_port, 5000);
  env["PMIX_RANK"] = "2";
  ExpectInvalid(env, "PMIX_RANK=2 is not below WORLD_SIZE=2");
  env.erase("WORLD_SIZE");
  ExpectInvalid(env, "PMIX_RANK is set but the world size is not");
  // Open MPI 5 sets PMIX_RANK beside its own variables: Open MPI's row wins.
  env = {{"PMIX_RANK", "0"}, {"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"},
         {"WEFT_STORE_ADDR", "h:5000"}};
  EXPECT_EQ(DetectLaunch(env)->launcher, "openmpi");
}

TEST(DetectLaunch, NothingFoundListsWhatWasLookedFor) {
  ExpectInvalid({{"PATH", "/bin"}}, "WEFT_RANK");
  ExpectInvalid({{"PATH", "/bin"}}, "PMI_RANK+PMI_SIZE (MPICH, Intel MPI)");
  ExpectInvalid({{"PATH", "/bin"}}, "start the ranks with weftrun -n N");
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
