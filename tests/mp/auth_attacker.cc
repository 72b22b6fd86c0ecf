#include "auth_attacker.h"

#include <sys/socket.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/job_key.h"
#include "bootstrap/store.h"
#include "bootstrap/store_protocol.h"
#include "core/random_bytes.h"
#include "transport/card.h"

namespace weft::authtest {
namespace {

Deadline Soon() { return Deadline::AfterSeconds(30); }

Result<Attack> Send(const std::string& name, const net::SockAddr& to, const std::string& bytes,
                    bool half_close = false) {
  WEFT_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(to, Soon()));
  WEFT_RETURN_IF_ERROR(net::WriteFull(fd.get(), bytes.data(), bytes.size(), Soon()));
  if (half_close) ::shutdown(fd.get(), SHUT_WR);  // "truncated": the client stops here
  return Attack{name, std::move(fd)};
}

// A proof frame with a MAC that no key made.
std::string ForgedProof() {
  std::string mac(32, '\0');
  (void)RandomBytes(mac.data(), mac.size());
  return std::string("WFTA\x01\x03\x20\x00", 8) + mac;
}

// A complete, legitimate transcript (hello + proof) made with the job's key against a
// server of our own: what an eavesdropper on a real handshake would have recorded.
std::string RecordedTranscript(const net::AuthKey& key, net::AuthRole role, int rank,
                               uint64_t context) {
  net::AuthClient client(key, role, rank, context);
  net::AuthServer server(key, role, context);
  std::string hello = client.Hello().value(), challenge;
  (void)server.Feed(hello, &challenge);
  std::string proof = client.Answer(net::ParseAuthFrame(challenge).value()).value();
  return hello + proof;
}

}  // namespace

Result<std::vector<Attack>> AttackStore(const net::SockAddr& store, const net::AuthKey& key,
                                        bool silent) {
  std::vector<Attack> out;
  auto add = [&](Result<Attack> a) -> Status {
    if (!a.ok()) return a.status();
    out.push_back(std::move(a).value());
    return Status::Ok();
  };
  if (silent) {
    WEFT_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(store, Soon()));
    out.push_back(Attack{"store silent client", std::move(fd)});
  }
  WEFT_RETURN_IF_ERROR(add(Send("store garbage", store, "GET / HTTP/1.1\r\nHost: weft\r\n\r\n")));
  WEFT_RETURN_IF_ERROR(add(Send("store request without handshake", store,
                                bootstrap::EncodeRequest({bootstrap::StoreCmd::kGet, "weft", "", 0}))));
  net::AuthClient truncated(key, net::AuthRole::kStore, -1, 0);
  std::string hello = truncated.Hello().value();
  WEFT_RETURN_IF_ERROR(add(Send("store truncated hello", store, hello.substr(0, 20), true)));

  // Replay: record a real handshake with the store, then play the client's bytes again.
  {
    WEFT_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(store, Soon()));
    net::AuthClient client(key, net::AuthRole::kStore, -1, 0);
    std::string h = client.Hello().value();
    WEFT_RETURN_IF_ERROR(net::WriteFull(fd.get(), h.data(), h.size(), Soon()));
    std::string challenge(72, '\0');
    WEFT_RETURN_IF_ERROR(net::ReadFull(fd.get(), challenge.data(), challenge.size(), Soon()));
    WEFT_ASSIGN_OR_RETURN(net::AuthFrame frame, net::ParseAuthFrame(challenge));
    WEFT_ASSIGN_OR_RETURN(std::string proof, client.Answer(frame));
    WEFT_RETURN_IF_ERROR(net::WriteFull(fd.get(), proof.data(), proof.size(), Soon()));
    std::string verdict(9, '\0');
    WEFT_RETURN_IF_ERROR(net::ReadFull(fd.get(), verdict.data(), verdict.size(), Soon()));
    if (verdict[8] != 1) return Internal("the legitimate handshake to record was refused");
    WEFT_RETURN_IF_ERROR(add(Send("store replayed handshake", store, h + proof)));
  }
  net::AuthKey wrong = bootstrap::KeyFromSecret("not this job's secret");
  net::AuthClient forger(wrong, net::AuthRole::kStore, -1, 0);
  WEFT_RETURN_IF_ERROR(add(Send("store forged proof", store, forger.Hello().value() + ForgedProof())));
  net::AuthClient data_role(key, net::AuthRole::kData, 0, 0);
  WEFT_RETURN_IF_ERROR(add(Send("store hello for a data port", store, data_role.Hello().value())));

  // A whole client with the wrong secret must be refused at once.
  auto wrong_client = bootstrap::StoreClient::Connect(store, wrong, Soon());
  if (wrong_client.ok()) return Internal("a store client with the wrong secret was accepted");
  std::printf("attack: store client with the wrong secret refused: %s\n",
              wrong_client.status().ToString().c_str());
  return out;
}

Result<std::vector<Attack>> AttackDataPort(const net::SockAddr& store, const net::AuthKey& key,
                                           const std::string& cards_prefix, int world,
                                           int target_rank) {
  WEFT_ASSIGN_OR_RETURN(auto client, bootstrap::StoreClient::Connect(store, key, Soon()));
  WEFT_ASSIGN_OR_RETURN(std::string value,
                        client->Get(fmt::format("{}/{}", cards_prefix, target_rank), Soon()));
  size_t hash = value.find('#');
  if (hash == std::string::npos) return ProtocolError("card without its size prefix");
  WEFT_ASSIGN_OR_RETURN(transport::Card card, transport::DecodeCard(value.substr(hash + 1)));
  if (card.tcp.empty()) return ProtocolError(fmt::format("rank {} has no tcp address", target_rank));
  const net::SockAddr to = card.tcp.back();  // loopback: this test runs on one host
  const uint64_t comm = card.comm_id;
  const std::string who = fmt::format("rank {} ", target_rank);
  std::printf("attack: rank %d's data port is %s (of %d ranks)\n", target_rank,
              to.ToString().c_str(), world);

  std::vector<Attack> out;
  auto add = [&](Result<Attack> a) -> Status {
    if (!a.ok()) return a.status();
    out.push_back(std::move(a).value());
    return Status::Ok();
  };
  {
    WEFT_ASSIGN_OR_RETURN(net::Fd fd, net::Connect(to, Soon()));
    out.push_back(Attack{who + "silent client", std::move(fd)});
  }
  WEFT_RETURN_IF_ERROR(add(Send(who + "garbage", to, std::string(64, '\xff'))));
  // What a weft without authentication sends first: {"WFTH", version 1, comm id, rank, size}.
  std::string legacy("WFTH\x01\x00\x00\x00", 8);
  for (int i = 0; i < 8; ++i) legacy += static_cast<char>(comm >> (8 * i));
  legacy += std::string("\x03\x00\x00\x00", 4);
  legacy += static_cast<char>(world);
  legacy += std::string(3, '\0');
  WEFT_RETURN_IF_ERROR(add(Send(who + "unauthenticated data handshake", to, legacy)));
  net::AuthClient truncated(key, net::AuthRole::kData, world - 1, comm);
  WEFT_RETURN_IF_ERROR(
      add(Send(who + "truncated hello", to, truncated.Hello().value().substr(0, 30), true)));
  WEFT_RETURN_IF_ERROR(add(Send(who + "replayed handshake", to,
                                RecordedTranscript(key, net::AuthRole::kData, world - 1, comm))));
  net::AuthClient forger(bootstrap::KeyFromSecret("not this job's secret"), net::AuthRole::kData,
                         world - 1, comm);
  WEFT_RETURN_IF_ERROR(
      add(Send(who + "forged proof (wrong secret)", to, forger.Hello().value() + ForgedProof())));
  return out;
}

Status ExpectAllClosed(std::vector<Attack>& attacks, const Deadline& deadline) {
  std::vector<std::string> open, accepted;
  for (Attack& a : attacks) {
    // Read whatever the server answers (a challenge, a verdict) until it closes.
    std::string got;
    char c;
    Status s;
    while ((s = net::ReadFull(a.fd.get(), &c, 1, deadline)).ok()) got += c;
    // A verdict frame ends "WFTA 01 04 01 00 <v>": an accepting one would be a failure.
    size_t v = got.find(std::string("WFTA\x01\x04\x01\x00", 8));
    if (v != std::string::npos && v + 8 < got.size() && got[v + 8] == 1) accepted.push_back(a.name);
    if (s.code() == Code::kUnavailable) {
      std::printf("attack: %s: rejected (closed by the server after %zu bytes of answer)\n",
                  a.name.c_str(), got.size());
    } else {
      open.push_back(a.name + " (" + s.ToString() + ")");
    }
  }
  if (!accepted.empty())
    return Internal(fmt::format("accepted: {}", fmt::join(accepted, "; ")));
  if (!open.empty()) return Internal(fmt::format("not closed: {}", fmt::join(open, "; ")));
  return Status::Ok();
}

}  // namespace weft::authtest
