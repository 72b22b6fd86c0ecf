// The authentication handshake (net/auth.h) between the pure client and server state
// machines, in memory: accepted with the same key; rejected for a wrong key, garbage,
// a truncated or replayed transcript, or a hello for another role, rank or communicator.
#include <gtest/gtest.h>

#include <string>

#include "net/auth.h"

namespace weft::net {
namespace {

const AuthKey kKey = DeriveAuthKey("test", "the job's secret");
const AuthKey kOtherKey = DeriveAuthKey("test", "another job's secret");

// What one client/server run sent each way, and how it ended.
struct Transcript {
  std::string hello, challenge, proof, verdict;
  Status client = Status::Ok();  // the client's end
  Status server = Status::Ok();  // the server's end
  bool server_done = false;
};

Transcript Handshake(const AuthKey& client_key, const AuthKey& server_key, AuthRole client_role,
               AuthRole server_role, uint64_t client_ctx, uint64_t server_ctx, int rank = 3) {
  Transcript t;
  AuthClient client(client_key, client_role, rank, client_ctx);
  AuthServer server(server_key, server_role, server_ctx);
  t.hello = client.Hello().value();
  auto used = server.Feed(t.hello, &t.challenge);
  if (!used.ok()) {
    t.server = used.status();
    return t;
  }
  EXPECT_EQ(used.value(), t.hello.size());
  auto challenge = ParseAuthFrame(t.challenge);
  EXPECT_TRUE(challenge.ok() && challenge->consumed == t.challenge.size());
  auto proof = client.Answer(challenge.value());
  if (!proof.ok()) {
    t.client = proof.status();
    return t;
  }
  t.proof = proof.value();
  auto used2 = server.Feed(t.proof, &t.verdict);
  if (!used2.ok()) t.server = used2.status();
  t.server_done = server.done();
  auto verdict = ParseAuthFrame(t.verdict);
  EXPECT_TRUE(verdict.ok() && verdict->consumed == t.verdict.size());
  t.client = client.Verdict(verdict.value());
  if (t.server_done) {
    EXPECT_EQ(server.hello().rank, rank);
    EXPECT_EQ(server.hello().context, server_ctx);
  }
  return t;
}

TEST(AuthTest, SameKeyIsAccepted) {
  Transcript t = Handshake(kKey, kKey, AuthRole::kData, AuthRole::kData, 7, 7);
  EXPECT_TRUE(t.client.ok()) << t.client.ToString();
  EXPECT_TRUE(t.server.ok()) << t.server.ToString();
  EXPECT_TRUE(t.server_done);
  // No secret on the wire: the key's bytes appear nowhere in the transcript.
  std::string all = t.hello + t.challenge + t.proof + t.verdict;
  EXPECT_EQ(all.find(std::string(kKey.view().substr(0, 8))), std::string::npos);
}

TEST(AuthTest, ClientWithAnotherKeyIsToldTheServerIsForeign) {
  // The client checks the server's MAC first, so it refuses before proving anything.
  Transcript t = Handshake(kOtherKey, kKey, AuthRole::kStore, AuthRole::kStore, 0, 0);
  EXPECT_EQ(t.client.code(), Code::kProtocolError);
  EXPECT_NE(t.client.message().find("does not hold this job's key"), std::string::npos);
  EXPECT_FALSE(t.server_done);
}

TEST(AuthTest, ServerRejectsAProofMadeWithAnotherKey) {
  // A client that skips the server check and answers anyway (an attacker would).
  AuthServer server(kKey, AuthRole::kStore, 0);
  AuthClient honest(kKey, AuthRole::kStore, -1, 0);
  std::string hello = honest.Hello().value(), challenge;
  ASSERT_TRUE(server.Feed(hello, &challenge).ok());
  // Same hello, proof forged with a made-up MAC.
  std::string forged = std::string("WFTA\x01\x03\x20\x00", 8) + std::string(32, 'x');
  std::string verdict;
  auto r = server.Feed(forged, &verdict);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("wrong proof"), std::string::npos);
  EXPECT_FALSE(server.done());
  auto v = ParseAuthFrame(verdict);
  ASSERT_TRUE(v.ok() && v->consumed > 0);
  EXPECT_FALSE(honest.Verdict(v.value()).ok());
}

TEST(AuthTest, ReplayedTranscriptIsRejected) {
  Transcript recorded = Handshake(kKey, kKey, AuthRole::kData, AuthRole::kData, 7, 7);
  ASSERT_TRUE(recorded.server_done);
  // The attacker replays the client's bytes to a new connection: the server's fresh
  // nonce makes the old proof wrong.
  AuthServer server(kKey, AuthRole::kData, 7);
  std::string out;
  auto r = server.Feed(recorded.hello + recorded.proof, &out);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("wrong proof"), std::string::npos);
  EXPECT_FALSE(server.done());
}

TEST(AuthTest, WrongRoleOrCommunicatorIsRejected) {
  Transcript role = Handshake(kKey, kKey, AuthRole::kData, AuthRole::kStore, 0, 0);
  EXPECT_NE(role.server.message().find("data connection offered to a store port"),
            std::string::npos)
      << role.server.ToString();
  Transcript comm = Handshake(kKey, kKey, AuthRole::kData, AuthRole::kData, 8, 7);
  EXPECT_NE(comm.server.message().find("communicator 0x8"), std::string::npos)
      << comm.server.ToString();
}

TEST(AuthTest, ClaimedRankIsBoundIntoTheProof) {
  // A man in the middle rewrites the claimed rank in the hello: the proof no longer fits.
  AuthClient client(kKey, AuthRole::kData, 2, 7);
  AuthServer server(kKey, AuthRole::kData, 7);
  std::string hello = client.Hello().value();
  std::string relayed = hello;
  relayed[kAuthHeadBytes + 4] = 5;  // rank 2 -> 5
  std::string challenge;
  ASSERT_TRUE(server.Feed(relayed, &challenge).ok());
  // The server's MAC was made over the altered hello: the client notices.
  auto proof = client.Answer(ParseAuthFrame(challenge).value());
  EXPECT_FALSE(proof.ok());
}

TEST(AuthTest, GarbageAndTruncatedInput) {
  for (std::string bad : {std::string("GET / HTTP/1.1\r\n"), std::string(100, '\0'),
                          std::string("WFTA\x02\x01\x30\x00", 8),    // other version
                          std::string("WFTA\x01\x09\x30\x00", 8),    // unknown kind
                          std::string("WFTA\x01\x01\xff\xff", 8)}) {  // wrong length
    AuthServer server(kKey, AuthRole::kStore, 0);
    std::string out;
    EXPECT_FALSE(server.Feed(bad, &out).ok()) << bad;
    EXPECT_TRUE(out.empty());
  }
  // Truncated: every prefix of a hello is "need more", never an error or an answer.
  AuthClient client(kKey, AuthRole::kStore, -1, 0);
  std::string hello = client.Hello().value();
  for (size_t n = 0; n < hello.size(); ++n) {
    AuthServer server(kKey, AuthRole::kStore, 0);
    std::string out;
    auto r = server.Feed(std::string_view(hello).substr(0, n), &out);
    ASSERT_TRUE(r.ok()) << n;
    EXPECT_EQ(r.value(), 0u);
    EXPECT_TRUE(out.empty());
  }
  // A proof before any hello.
  AuthServer server(kKey, AuthRole::kStore, 0);
  std::string out;
  EXPECT_FALSE(server.Feed(std::string("WFTA\x01\x03\x20\x00", 8) + std::string(32, 'x'), &out).ok());
}

TEST(AuthTest, KeysFromDifferentLabelsOrMaterialDiffer) {
  EXPECT_NE(DeriveAuthKey("a", "x").bytes, DeriveAuthKey("b", "x").bytes);
  EXPECT_NE(DeriveAuthKey("a", "x").bytes, DeriveAuthKey("a", "y").bytes);
  EXPECT_EQ(DeriveAuthKey("a", "x").bytes, DeriveAuthKey("a", "x").bytes);
}

}  // namespace
}  // namespace weft::net
