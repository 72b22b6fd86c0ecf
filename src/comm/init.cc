#include "comm/init.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "bootstrap/job_key.h"
#include "bootstrap/launcher_env.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/store.h"
#include "comm/unique_id.h"
#include "core/env.h"
#include "core/log.h"
#include "net/socket.h"
#include "transport/tcp/tcp_setup.h"

namespace weft::comm {
namespace {

uint64_t RandomId() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

// Store servers started by weftGetUniqueId live until the process exits: the id may be
// used by any number of ranks at any later time.
Mutex g_servers_mu;
std::vector<std::unique_ptr<bootstrap::StoreServer>>& IdServers() {
  static auto* servers = new std::vector<std::unique_ptr<bootstrap::StoreServer>>();
  return *servers;
}

// What the bootstrap must keep alive for the communicator's lifetime.
struct BootstrapState {
  std::unique_ptr<bootstrap::StoreServer> server;  // on the rank that hosts the store
  std::unique_ptr<bootstrap::StoreClient> client;
};

// Exchanges mesh cards through the store, each prefixed with the sender's idea of the
// world size, so that a rank started with the wrong size is named instead of hanging.
transport::AllGatherFn StoreAllGather(const Communicator::Bootstrap& bootstrap,
                                      std::string prefix, int rank, int size,
                                      Deadline deadline) {
  bootstrap::StoreClient* client = bootstrap.store;
  std::shared_ptr<Mutex> mu = bootstrap.store_mu;
  return [=](const std::string& card) -> Result<std::vector<std::string>> {
    std::string mine = fmt::format("{}#{}", size, card);
    MutexLock lock(mu.get());
    WEFT_ASSIGN_OR_RETURN(std::vector<std::string> cards,
                          bootstrap::ExchangeCards(*client, prefix, rank, size, mine, deadline));
    lock.Unlock();
    for (int r = 0; r < size; ++r) {
      size_t hash = cards[r].find('#');
      if (hash == std::string::npos) return ProtocolError("malformed card from rank " + std::to_string(r));
      std::string their_size = cards[r].substr(0, hash);
      if (their_size != std::to_string(size)) {
        return InvalidUsage(fmt::format(
            "rank {} was started with world size {}, but rank {} with world size {}", r,
            their_size, rank, size));
      }
      cards[r].erase(0, hash + 1);
    }
    return cards;
  };
}

Result<std::unique_ptr<Communicator>> Rendezvous(std::unique_ptr<BootstrapState> state,
                                                 const net::AuthKey& key,
                                                 const std::string& prefix, uint64_t comm_id,
                                                 int rank, int size, Deadline deadline,
                                                 const CommOptions& options = {}) {
  Communicator::Bootstrap keep;
  keep.store = state->client.get();
  keep.store_mu = std::make_shared<Mutex>();
  keep.key = key;
  keep.keepalive = std::shared_ptr<void>(std::move(state));
  return CreateThroughStore(std::move(keep), prefix, comm_id, rank, size, deadline, options);
}

// Serves the store where the ranks connect: the store address itself, so interfaces
// nobody uses for this job accept nothing. Two cases keep the wildcard address of the
// family, as multi-host jobs need: a host name that resolves to loopback here (Debian
// maps the host's own name to 127.0.1.1 while other hosts resolve it to a real address),
// and an address this host cannot bind (behind NAT).
Result<std::unique_ptr<bootstrap::StoreServer>> StartEnvStore(const bootstrap::LaunchInfo& info,
                                                             const net::SockAddr& store_addr,
                                                             const net::AuthKey& key) {
  bool literal =
      net::SockAddr::FromHostPort(info.store_host, info.store_port, net::Resolve::kNumericOnly).ok();
  if (literal || !transport::tcp::IsLoopback(store_addr)) {
    auto server = bootstrap::StoreServer::Start(store_addr, key);
    if (server.ok()) return server;
    WEFT_INFO("store: cannot listen on {} ({}); listening on every address instead",
              store_addr.ToString(), server.status().message());
  }
  std::string any = store_addr.family() == AF_INET6 ? "::" : "0.0.0.0";
  WEFT_ASSIGN_OR_RETURN(net::SockAddr bind_addr, net::SockAddr::FromHostPort(any, info.store_port));
  return bootstrap::StoreServer::Start(bind_addr, key);
}

}  // namespace

Result<std::unique_ptr<Communicator>> CreateThroughStore(Communicator::Bootstrap bootstrap,
                                                         const std::string& prefix,
                                                         uint64_t comm_id, int rank, int size,
                                                         Deadline deadline,
                                                         const CommOptions& options) {
  if (bootstrap.store == nullptr || !bootstrap.store_mu)
    return Internal("CreateThroughStore without a store client");
  auto gather = StoreAllGather(bootstrap, prefix, rank, size, deadline);
  return Communicator::Create(rank, size, comm_id, gather, std::move(bootstrap), options);
}

Status NewUniqueId(weftUniqueId* id) {
  // The id carries the address of a store served from this process, on the first
  // interface weft would use for traffic (WEFT_SOCKET_IFNAME), so other hosts reach it.
  WEFT_ASSIGN_OR_RETURN(std::vector<net::Interface> ifaces, net::SelectInterfaces());
  if (ifaces.empty()) return InvalidArgument("no network interface for the rendezvous store");
  // The id carries a fresh secret too: only holders of the id can use its store and
  // connect to its ranks.
  WEFT_ASSIGN_OR_RETURN(std::string secret, bootstrap::NewSecret(kUniqueIdSecretHex / 2));
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<bootstrap::StoreServer> server,
                        bootstrap::StoreServer::Start(ifaces.front().addr,
                                                      bootstrap::KeyFromEnvOrSecret(secret)));
  std::string text = FormatUniqueId(server->address(), RandomId(), secret);
  if (text.size() >= sizeof(id->internal)) return Internal("unique id does not fit");
  std::memset(id->internal, 0, sizeof(id->internal));
  std::memcpy(id->internal, text.data(), text.size());
  MutexLock lock(&g_servers_mu);
  IdServers().push_back(std::move(server));
  return Status::Ok();
}

Result<std::unique_ptr<Communicator>> InitRank(int nranks, const weftUniqueId& id, int rank,
                                               const CommOptions& options) {
  if (nranks < 1) return InvalidArgument(fmt::format("nranks {} must be at least 1", nranks));
  if (rank < 0 || rank >= nranks)
    return InvalidArgument(fmt::format("rank {} is out of range [0, {})", rank, nranks));
  WEFT_ASSIGN_OR_RETURN(UniqueIdFields fields, ParseUniqueId(std::string_view(
                                                    id.internal, strnlen(id.internal,
                                                                         sizeof(id.internal)))));
  const uint64_t nonce = fields.nonce;
  SetLogRank(rank);
  WEFT_ASSIGN_OR_RETURN(double timeout, TimeoutSeconds());
  // The program's timeout bounds the rendezvous too, as NCCL's config does its init.
  if (options.timeout_s > 0) timeout = options.timeout_s;
  Deadline deadline = Deadline::AfterSeconds(timeout);
  auto state = std::make_unique<BootstrapState>();
  net::AuthKey key = bootstrap::KeyFromEnvOrSecret(fields.secret);
  WEFT_ASSIGN_OR_RETURN(state->client,
                        bootstrap::StoreClient::Connect(fields.store, key, deadline));
  return Rendezvous(std::move(state), key, fmt::format("weft/{:016x}/cards", nonce), nonce, rank,
                    nranks, deadline, options);
}

Result<std::unique_ptr<Communicator>> InitFromEnv() {
  // Each call in a process is a new communicator; the k-th call of every rank meets the
  // k-th call of the others.
  static std::atomic<int> generation{0};
  int gen = generation++;

  WEFT_ASSIGN_OR_RETURN(bootstrap::LaunchInfo info, bootstrap::DetectLaunch());
  SetLogRank(info.rank);
  WEFT_ASSIGN_OR_RETURN(double timeout, TimeoutSeconds());
  Deadline deadline = Deadline::AfterSeconds(timeout);
  auto state = std::make_unique<BootstrapState>();
  WEFT_ASSIGN_OR_RETURN(net::SockAddr store_addr,
                        net::SockAddr::FromHostPort(info.store_host, info.store_port));
  const net::AuthKey key = bootstrap::KeyForLaunch(info);
  if (info.host_store && gen == 0) {
    auto server = StartEnvStore(info, store_addr, key);
    if (!server.ok()) {
      return server.status().WithContext(fmt::format(
          "rank 0 ({}) could not serve the rendezvous store on port {}", info.launcher,
          info.store_port));
    }
    state->server = std::move(server).value();
  }
  WEFT_ASSIGN_OR_RETURN(state->client,
                        bootstrap::StoreClient::Connect(store_addr, key, deadline));

  // Rank 0 picks the communicator id; everyone else reads it.
  std::string prefix = fmt::format("weft/env{}", gen);
  uint64_t comm_id;
  if (info.rank == 0) {
    comm_id = RandomId();
    WEFT_RETURN_IF_ERROR(state->client->Set(prefix + "/id", fmt::format("{:016x}", comm_id), deadline));
  } else {
    auto got = state->client->Get(prefix + "/id", deadline);
    if (!got.ok())
      return got.status().WithContext(fmt::format(
          "rank {} waited for rank 0 to publish the communicator id", info.rank));
    auto parsed = ParseHex64(got.value());
    if (!parsed.ok())
      return ProtocolError("the store holds a malformed communicator id: " + got.value());
    comm_id = parsed.value();
  }
  WEFT_INFO("init from {} environment: rank {} of {}, store {}:{}", info.launcher, info.rank,
            info.world_size, info.store_host, info.store_port);
  return Rendezvous(std::move(state), key, prefix + "/cards", comm_id, info.rank, info.world_size,
                    deadline);
}

}  // namespace weft::comm
