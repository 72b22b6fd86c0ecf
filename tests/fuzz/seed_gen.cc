// Writes the seed corpora (corpus/<target>/seed-*) from the real serialisers, so the
// seeds are exactly what weft puts on the wire, plus a few hand-made nasty inputs.
// Rerun after a format change:  weft_fuzz_seeds tests/fuzz/corpus
// Files it does not name (inputs libFuzzer merged in) are left alone.
#include <netinet/in.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "bootstrap/store_protocol.h"
#include "net/auth.h"
#include "net/socket.h"
#include "transport/card.h"
#include "transport/wire.h"

namespace {

using namespace weft;
using bootstrap::StoreCmd;
using bootstrap::StoreReply;
using bootstrap::StoreRequest;

std::filesystem::path g_root;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  std::filesystem::path dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / ("seed-" + name), std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string U32(uint32_t v) {
  std::string s;
  bootstrap::PutU32(s, v);
  return s;
}

std::string Req(StoreCmd cmd, std::string key, std::string value = "", int64_t arg = 0) {
  return bootstrap::EncodeRequest(StoreRequest{cmd, std::move(key), std::move(value), arg});
}

void StoreSeeds() {
  const std::string set = Req(StoreCmd::kSet, "weft/env0/id", "00000000deadbeef");
  const std::string get = Req(StoreCmd::kGet, "weft/env0/cards/3");
  const std::string add = Req(StoreCmd::kAdd, "barrier/0/arrived", "", 1);
  const std::string check = Req(StoreCmd::kCheck, "weft/env0/cards/all");
  // store_request: a frame-limit byte, then frames.
  Write("store_request", "set", std::string(1, '\0') + set);
  Write("store_request", "get", std::string(1, '\0') + get);
  Write("store_request", "add", std::string(1, '\0') + add);
  Write("store_request", "check", std::string(1, '\0') + check);
  Write("store_request", "pipelined", std::string(1, '\0') + set + get + add + check);
  Write("store_request", "small-limit", std::string(1, '\1') + get + set);
  Write("store_request", "huge-total", std::string(1, '\0') + U32(0xffffffff) + "\x02");
  Write("store_request", "key-overrun",
        std::string(1, '\0') + U32(9) + "\x02" + U32(0xfffffff0) + "abcd");
  Write("store_request", "value-overrun",
        std::string(1, '\0') + U32(14) + "\x01" + U32(1) + "k" + U32(0x80000000) + "xxxx");
  Write("store_request", "add-with-value",
        std::string(1, '\0') + Req(StoreCmd::kSet, "k", "v", 5).replace(4, 1, "\x03"));
  Write("store_request", "truncated", std::string(1, '\0') + set.substr(0, set.size() - 3));

  // store_table: (connection byte, frame) pairs; 0x80|conn closes a connection.
  auto on = [](int conn, const std::string& frame) { return std::string(1, char(conn)) + frame; };
  Write("store_table", "set-get", on(0, set) + on(1, Req(StoreCmd::kGet, "weft/env0/id")));
  Write("store_table", "parked-then-set",
        on(1, Req(StoreCmd::kGet, "k")) + on(2, Req(StoreCmd::kGet, "k")) +
            on(0, Req(StoreCmd::kSet, "k", "card")) + on(1, Req(StoreCmd::kCheck, "k")));
  Write("store_table", "add-counter",
        on(0, add) + on(1, add) + on(2, Req(StoreCmd::kGet, "barrier/0/arrived")) +
            on(3, Req(StoreCmd::kAdd, "barrier/0/arrived", "", -2)));
  Write("store_table", "add-overflow",
        on(0, Req(StoreCmd::kSet, "n", "9223372036854775807")) + on(1, Req(StoreCmd::kAdd, "n", "", 1)) +
            on(2, Req(StoreCmd::kSet, "m", "x")) + on(2, Req(StoreCmd::kAdd, "m", "", 1)));
  Write("store_table", "forget-parked",
        on(1, Req(StoreCmd::kGet, "k")) + std::string(1, char(0x81)) + on(0, Req(StoreCmd::kAdd, "k", "", 3)));

  // store_client: an op byte (0 get, 1 set, 2 add, 3 check), then the reply stream.
  std::string i64;
  bootstrap::PutI64(i64, 42);
  Write("store_client", "get-ok", std::string(1, '\0') + bootstrap::EncodeReply(StoreReply::kOk, "card text"));
  Write("store_client", "set-ok", "\x01" + bootstrap::EncodeReply(StoreReply::kOk, ""));
  Write("store_client", "add-ok", "\x02" + bootstrap::EncodeReply(StoreReply::kOk, i64));
  Write("store_client", "check-ok", "\x03" + bootstrap::EncodeReply(StoreReply::kOk, "\x01"));
  Write("store_client", "get-error",
        std::string(1, '\0') + bootstrap::EncodeReply(StoreReply::kError, "no such thing"));
  Write("store_client", "add-short", "\x02" + bootstrap::EncodeReply(StoreReply::kOk, "1234"));
  Write("store_client", "zero-total", std::string(1, '\0') + U32(0) + "\x00");
  Write("store_client", "huge-total", std::string(1, '\0') + U32(0x7fffffff) + "\x00");
  Write("store_client", "bad-status", "\x03" + U32(2) + "\x07\x01");
  Write("store_client", "truncated", std::string(1, '\0') + U32(100) + "\x00" + "abc");
}

net::SockAddr Addr(const std::string& text) {
  auto a = net::SockAddr::Parse(text);
  if (!a.ok()) {
    std::fprintf(stderr, "seed address %s: %s\n", text.c_str(), a.status().ToString().c_str());
    std::exit(1);
  }
  return a.value();
}

void CardSeeds() {
  transport::Card c;
  c.rank = 3;
  c.size = 4;
  c.comm_id = 0xdeadbeef;
  c.host_id = "myhost|5f1c0a|net:[4026531840]";
  c.tcp = {Addr("10.0.0.2:4312"), Addr("127.0.0.1:4312")};
  Write("card", "v4", transport::EncodeCard(c));
  c.mode = transport::TransportMode::kTcp;
  c.tcp = {Addr("[fe80::1%1]:4312"), Addr("[2001:db8::7]:9"), Addr("[::1]:4312")};
  Write("card", "v6", transport::EncodeCard(c));
  c.mode = transport::TransportMode::kShm;
  c.rank = 0;
  c.size = 1;
  c.tcp.clear();
  Write("card", "no-tcp", transport::EncodeCard(c));
  Write("card", "rank-out-of-range", "weft-card 1\nrank 4 size 4 comm 00000000deadbeef mode auto\nhost h\ntcp");
  Write("card", "no-port", "weft-card 1\nrank 0 size 2 comm 00000000deadbeef mode auto\nhost h\ntcp [::1] 1.2.3.4");
  Write("card", "name-not-literal",
        "weft-card 1\nrank 0 size 2 comm 00000000deadbeef mode auto\nhost h\ntcp 1.example:80");
  Write("card", "extra-line", transport::EncodeCard(c) + "\n");
  c.mode = transport::TransportMode::kOfi;
  c.rank = 1;
  c.size = 2;
  c.ofi_provider = "tcp;ofi_rxm";
  c.ofi_addrs = {{0x0a, 0x1b, 0x2c, 0x3d}, {0x4e, 0x5f}};
  c.ofi_eager = 1048576;
  Write("card", "ofi", transport::EncodeCard(c));

  Write("sockaddr", "v4", "10.0.0.2:4312");
  Write("sockaddr", "v4-no-port", "127.0.0.1");
  Write("sockaddr", "v6", "[2001:db8::7]:9");
  Write("sockaddr", "v6-scope", "[fe80::1%1]:80");
  Write("sockaddr", "v6-bare", "::1");
  Write("sockaddr", "v4-mapped", "[::ffff:1.2.3.4]:65535");
  Write("sockaddr", "port-too-big", "1.2.3.4:65536");
  Write("sockaddr", "name", "localhost:80");
  Write("sockaddr", "junk-after-bracket", "[::1]x80");
}

void WireSeeds() {
  transport::WireHeader h;
  h.kind = 0;
  h.seq = 7;
  h.step = 3;
  h.dtype_op = transport::PackDtypeOp(7, 0);
  h.bytes = 4096;
  auto bytes = [](const transport::WireHeader& w) {
    return std::string(reinterpret_cast<const char*>(&w), sizeof(w));
  };
  const std::string ranks = U32(1) + U32(2);
  Write("wire_header", "expected", bytes(h) + ranks + "tcp 10.0.0.2:4312");
  transport::WireHeader other = h;
  other.seq = 8;
  Write("wire_header", "other-seq", bytes(other) + ranks);
  other = h;
  other.kind = transport::kPointToPoint;
  other.dtype_op = 0xffffffff;
  Write("wire_header", "p2p-bad-dtype", bytes(other) + ranks);
  other = h;
  other.magic = 0x12345678;
  Write("wire_header", "garbage", bytes(other) + ranks + "shm");
  Write("wire_header", "short", bytes(h).substr(0, 10));
}

// A real run of the handshake: the client's frames (what a server parses; mode byte 0
// or 1) and the server's (what a client parses; mode byte 2 or 3).
void AuthSeeds() {
  using namespace weft::net;
  AuthKey key = DeriveAuthKey("fuzz", "the job's secret");
  for (AuthRole role : {AuthRole::kStore, AuthRole::kData}) {
    const std::string r = AuthRoleName(role);
    const char side = role == AuthRole::kData ? 1 : 0;
    AuthClient client(key, role, 3, 7);
    AuthServer server(key, role, 7);
    std::string hello = client.Hello().value(), challenge, verdict;
    (void)server.Feed(hello, &challenge);
    std::string proof = client.Answer(ParseAuthFrame(challenge).value()).value();
    (void)server.Feed(proof, &verdict);
    Write("auth_frame", r + "-hello", std::string(1, side) + hello);
    Write("auth_frame", r + "-hello-proof", std::string(1, side) + hello + proof);
    Write("auth_frame", r + "-challenge", std::string(1, side | 2) + challenge);
    Write("auth_frame", r + "-verdict", std::string(1, side | 2) + verdict);
  }
}

void TextSeeds() {
  Write("slurm_hostlist", "ranges", "node[01-04,07],gpu5");
  Write("slurm_hostlist", "inner", "a-[1-3]b");
  Write("slurm_hostlist", "two-groups", "rack[2-3]-n[008-016]");
  Write("slurm_hostlist", "plain", "gpu5,gpu6");
  Write("slurm_hostlist", "unbalanced", "node[01-04");
  Write("slurm_hostlist", "nested", "n[1[2]]");
  Write("slurm_hostlist", "non-numeric", "node[a-b]");
  Write("slurm_hostlist", "close-first", "node]1[");

  // slurm_tasks: a node-index byte, then SLURM_TASKS_PER_NODE.
  Write("slurm_tasks", "repeat", std::string("\x02") + "2(x3),1");
  Write("slurm_tasks", "list", std::string("\x03") + "1,2,3,4");
  Write("slurm_tasks", "past-end", std::string("\x09") + "4(x2)");
  Write("slurm_tasks", "empty-repeat", std::string(1, '\0') + "(x)");
  Write("slurm_tasks", "zero", std::string(1, '\0') + "0(x2),1");
  Write("slurm_tasks", "long-number", std::string(1, '\0') + "1234567890");

  Write("ifname_spec", "prefixes", "eth,ib\neth0\nib1\nlo");
  Write("ifname_spec", "exclude", "^docker,lo\ndocker0\neth0");
  Write("ifname_spec", "exact", "=eth0\neth0\neth01");
  Write("ifname_spec", "exclude-exact", "^=lo\nlo\nlo0");
  Write("ifname_spec", "empty-entries", ",,a,\na");
  Write("ifname_spec", "caret-only", "^");
  Write("ifname_spec", "family", "AF_INET6");

  Write("launch_env", "weftrun",
        "WEFT_RANK=1\nWEFT_WORLD_SIZE=4\nWEFT_LOCAL_RANK=1\nWEFT_LOCAL_WORLD_SIZE=2\n"
        "WEFT_STORE_ADDR=10.0.0.1:29500");
  Write("launch_env", "torchrun",
        "RANK=0\nWORLD_SIZE=8\nLOCAL_RANK=0\nLOCAL_WORLD_SIZE=8\nMASTER_ADDR=node01\n"
        "MASTER_PORT=29500\nTORCHELASTIC_USE_AGENT_STORE=True");
  Write("launch_env", "openmpi",
        "OMPI_COMM_WORLD_RANK=3\nOMPI_COMM_WORLD_SIZE=4\nOMPI_COMM_WORLD_LOCAL_RANK=1\n"
        "OMPI_COMM_WORLD_LOCAL_SIZE=2\nWEFT_STORE_ADDR=[fe80::1%eth0]:7000\nSLURM_PROCID=0");
  Write("launch_env", "slurm",
        "SLURM_PROCID=5\nSLURM_NTASKS=6\nSLURM_LOCALID=1\nSLURM_NODEID=2\n"
        "SLURM_TASKS_PER_NODE=2(x3)\nSLURM_STEP_NODELIST=node[07-09]\nSLURM_JOB_ID=123456");
  Write("launch_env", "slurm-port-override",
        "SLURM_PROCID=0\nSLURM_NTASKS=2\nSLURM_NTASKS_PER_NODE=2\nSLURM_JOB_NODELIST=a,b\n"
        "WEFT_STORE_PORT=7000");
  Write("launch_env", "half-set", "WEFT_RANK=0\nMASTER_ADDR=h\nMASTER_PORT=0");

  // algo_spec: WEFT_ALGO, then size, rank, root, count (u32), element size bytes.
  const std::string call = std::string("\x07\x03\x00", 3) + U32(1 << 20) + "\x02";
  Write("algo_spec", "bare", "ring\n" + call);
  Write("algo_spec", "per-collective", "allreduce:ring,broadcast:binomial\n" + call);
  Write("algo_spec", "spaces-case", " Allgather : Recursive_Doubling ,\n" + call);
  Write("algo_spec", "unknown", "allreduce:teleport\n" + call);
  Write("algo_spec", "empty-entries", ",,ring,,\n" + std::string("\x01\x00\x00", 3) + U32(0));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_ROOT (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  StoreSeeds();
  CardSeeds();
  WireSeeds();
  TextSeeds();
  AuthSeeds();
  return 0;
}
