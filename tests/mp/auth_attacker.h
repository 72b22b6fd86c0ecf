// The attacker of tests/mp/auth_attack.cc: connections to the job's store and data ports
// that do not hold the job's key, each expected to be rejected (closed by the server).
// It uses weft's internal store client, with the job's key, only to learn where the data
// ports are and to record a legitimate handshake for replay.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/auth.h"
#include "net/socket.h"

namespace weft::authtest {

// One hostile connection, left open until its server closes it.
struct Attack {
  std::string name;  // "store garbage", "rank 0 replay", ...
  net::Fd fd;
};

// Attacks on the store at `store` whose key is `key`: garbage, a store request without
// the handshake, a truncated hello, a replayed legitimate handshake, a forged proof, a
// client with the wrong secret (checked at once: it must fail), a hello for a data port.
// The returned connections must each be closed by the store. `silent` adds a client
// that never sends a byte.
Result<std::vector<Attack>> AttackStore(const net::SockAddr& store, const net::AuthKey& key,
                                        bool silent);

// Attacks on the data listener of `target_rank`, found in the store's card of that rank
// (rendezvous prefix `cards_prefix`, `world` ranks): garbage, the pre-authentication
// data handshake alone, a truncated hello, a replayed legitimate transcript, a forged
// proof with the wrong secret, a silent client. Sent before the target accepts: the
// listener queues them, and the target meets them when it starts accepting.
Result<std::vector<Attack>> AttackDataPort(const net::SockAddr& store, const net::AuthKey& key,
                                           const std::string& cards_prefix, int world,
                                           int target_rank);

// Waits (until `deadline`) for the server to close every attack connection; the error
// names the attacks still open, or any that got an accepting verdict.
Status ExpectAllClosed(std::vector<Attack>& attacks, const Deadline& deadline);

}  // namespace weft::authtest
