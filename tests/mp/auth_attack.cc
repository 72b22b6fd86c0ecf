// auth_attack: a weft job under weftrun that is attacked while it runs (docs/RELIABILITY.md,
// "Authenticated connections"). Every rank runs allreduces and checks their values. The
// last rank is also the attacker, as a separate process it forks before it joins the job
// (a process that is no rank, holding sockets of its own):
//   1. before the last rank joins, the attacker opens hostile connections to the store
//      and to rank 0's data port (rank 0 accepts them once the last rank's card is
//      published, so it meets them while it is accepting its real peers);
//   2. while the job runs collectives, it attacks the store again;
//   3. it checks that the servers closed every hostile connection (including a silent
//      client, after the handshake deadline) and that none was accepted.
// The last rank waits for step 1 before joining (a pipe from the attacker), and every
// rank must finish its collectives with correct values. tests/mp/auth_attack_test.sh
// checks the rejections were logged.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "auth_attacker.h"
#include "bootstrap/job_key.h"
#include "bootstrap/launcher_env.h"
#include "weft/weft.h"

namespace {

using namespace weft;

int RunAttacker(int ready_fd, const bootstrap::LaunchInfo& info) {
  auto fail = [](const char* step, const Status& s) {
    std::printf("attack: FAILED in %s: %s\n", step, s.ToString().c_str());
    return 1;
  };
  auto store = net::SockAddr::FromHostPort(info.store_host, info.store_port);
  if (!store.ok()) return fail("store address", store.status());
  const net::AuthKey key = bootstrap::KeyForLaunch(info);
  auto on_store = authtest::AttackStore(*store, key, /*silent=*/true);
  if (!on_store.ok()) return fail("store attacks", on_store.status());
  auto on_data = authtest::AttackDataPort(*store, key, "weft/env0/cards", info.world_size, 0);
  if (!on_data.ok()) return fail("data port attacks", on_data.status());
  // Let the last rank join: rank 0 will now accept, meeting our connections first.
  char go = 1;
  if (::write(ready_fd, &go, 1) != 1) return fail("signalling", ErrnoStatus("write", errno));
  ::close(ready_fd);
  // Attack the store again while the collectives run.
  auto during = authtest::AttackStore(*store, key, /*silent=*/false);
  if (!during.ok()) return fail("store attacks during collectives", during.status());
  Deadline deadline = Deadline::AfterSeconds(60);
  for (auto* set : {&on_data.value(), &during.value(), &on_store.value()}) {
    Status s = authtest::ExpectAllClosed(*set, deadline);
    if (!s.ok()) return fail("checking the rejections", s);
  }
  std::printf("attack: all rejected\n");
  return 0;
}

int RunRank(weftComm_t comm, int rank, int size) {
  // Values that depend on the rank and the step, so a wrong peer or a stale message shows.
  constexpr int kCount = 4096, kSteps = 40;
  std::vector<double> buf(kCount);
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kCount; ++i) buf[i] = rank * 1000.0 + i + step;
    if (weftAllReduce(buf.data(), buf.data(), kCount, weftFloat64, weftSum, comm) != weftSuccess) {
      std::printf("auth_attack: allreduce failed: %s\n", weftGetLastError(comm));
      return 1;
    }
    for (int i = 0; i < kCount; ++i) {
      double want = 1000.0 * size * (size - 1) / 2 + double(size) * (i + step);
      if (buf[i] != want) {
        std::printf("auth_attack: step %d element %d is %g, expected %g\n", step, i, buf[i], want);
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace

int main() {
  auto info = bootstrap::DetectLaunch();
  if (!info.ok()) {
    std::printf("auth_attack: %s\n", info.status().ToString().c_str());
    return 2;
  }
  const bool attacker_here = info->rank == info->world_size - 1 && info->world_size > 1;
  pid_t attacker = -1;
  if (attacker_here) {
    int p[2];
    if (::pipe(p) != 0) return 2;
    std::fflush(stdout);
    attacker = ::fork();
    if (attacker == 0) {
      ::close(p[0]);
      int rc = RunAttacker(p[1], *info);
      std::fflush(stdout);
      std::_Exit(rc);
    }
    ::close(p[1]);
    char go = 0;
    if (::read(p[0], &go, 1) != 1) {
      std::printf("auth_attack: the attacker failed before the job started\n");
      ::waitpid(attacker, nullptr, 0);
      return 1;
    }
    ::close(p[0]);
  }
  weftComm_t comm = nullptr;
  if (weftCommInitFromEnv(&comm) != weftSuccess) {
    std::printf("auth_attack: init failed: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  int rc = RunRank(comm, info->rank, info->world_size);
  if (rc == 0 && weftBarrier(comm) != weftSuccess) rc = 1;
  weftCommDestroy(comm);
  if (attacker > 0) {
    int status = 0;
    ::waitpid(attacker, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("auth_attack: the attacker reports a failure\n");
      rc = 1;
    }
  }
  if (rc == 0) std::printf("auth_attack: ok\n");
  return rc;
}
