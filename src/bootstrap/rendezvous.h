// Rendezvous on top of the store: every rank publishes a "card" (its addresses, host
// id, ...) and gets everyone's, or simply waits for everyone (a barrier).
//
// Both are single-use per prefix: call them with a fresh prefix (e.g. "comm/<id>/cards",
// "comm/<id>/barrier/<n>") each time. Both block until every rank arrives or `deadline`
// passes; on timeout the DeadlineExceeded message lists the ranks that never arrived.
// Thread-safety: as StoreClient (one client per thread).
#pragma once

#include <string>
#include <vector>

#include "bootstrap/store.h"
#include "core/deadline.h"
#include "core/status.h"

namespace weft::bootstrap {

// Sets `<prefix>/<rank>` = card and returns all `size` cards, indexed by rank (this
// rank's own included). Rank 0 gathers the cards and publishes them under
// `<prefix>/all`, so the store answers O(size) requests rather than O(size^2).
// REQUIRES: 0 <= rank < size; every rank passes the same prefix and size.
// Timeout message, e.g.: "rendezvous 'comm/abc': timed out after 30.0 s waiting for
// ranks 4 of world size 5 (registered: 0-3)".
Result<std::vector<std::string>> ExchangeCards(StoreClient& store, const std::string& prefix,
                                               int rank, int size, const std::string& card,
                                               const Deadline& deadline);

// Returns once all `size` ranks have called Barrier with this prefix. Uses the keys
// `<prefix>/arrived` (a counter) and `<prefix>/done`.
Status Barrier(StoreClient& store, const std::string& prefix, int size,
               const Deadline& deadline);

// "0-3,5,7-9" for a sorted list of ranks; at most `max_ranges` ranges, then ",...".
std::string FormatRanks(const std::vector<int>& ranks, size_t max_ranges = 64);

}  // namespace weft::bootstrap
