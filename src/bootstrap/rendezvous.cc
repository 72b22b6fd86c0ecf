#include "bootstrap/rendezvous.h"

#include <chrono>

#include <fmt/format.h>

#include "bootstrap/store_protocol.h"

namespace weft::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;

std::string CardKey(const std::string& prefix, int rank) {
  return fmt::format("{}/{}", prefix, rank);
}

// The gathered cards as one value: u32 count, then u32 length + bytes per card.
std::string EncodeCards(const std::vector<std::string>& cards) {
  std::string out;
  PutU32(out, static_cast<uint32_t>(cards.size()));
  for (const auto& c : cards) {
    PutU32(out, static_cast<uint32_t>(c.size()));
    out += c;
  }
  return out;
}

Result<std::vector<std::string>> DecodeCards(const std::string& v, int size,
                                             const std::string& what) {
  auto bad = [&] { return ProtocolError(what + ": malformed gathered cards"); };
  if (v.size() < 4) return bad();
  if (GetU32(v.data()) != static_cast<uint32_t>(size)) {
    // Rank 0 gathered as many cards as its own world size says: the ranks disagree.
    return InvalidUsage(fmt::format(
        "{}: rank 0 was started with world size {}, but this rank with world size {}", what,
        GetU32(v.data()), size));
  }
  std::vector<std::string> cards;
  size_t pos = 4;
  for (int r = 0; r < size; ++r) {
    if (v.size() - pos < 4) return bad();
    size_t len = GetU32(v.data() + pos);
    pos += 4;
    if (len > v.size() - pos) return bad();
    cards.emplace_back(v, pos, len);
    pos += len;
  }
  if (pos != v.size()) return bad();
  return cards;
}

// On a timeout, which ranks did register? Checked with a fresh short deadline because
// the caller's has passed; a failure here only makes the message less specific.
std::string Missing(StoreClient& store, const std::string& prefix, int size, double waited,
                    const std::string& what) {
  Deadline d = Deadline::AfterSeconds(10);
  std::vector<int> present, absent;
  for (int r = 0; r < size; ++r) {
    auto has = store.Check(CardKey(prefix, r), d);
    if (!has.ok())
      return fmt::format("{}: timed out after {:.1f} s (could not list missing ranks: {})",
                         what, waited, has.status().ToString());
    (*has ? present : absent).push_back(r);
  }
  return fmt::format("{}: timed out after {:.1f} s waiting for ranks {} of world size {} "
                     "(registered: {})",
                     what, waited, FormatRanks(absent), size,
                     present.empty() ? "none" : FormatRanks(present));
}

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

std::string FormatRanks(const std::vector<int>& ranks, size_t max_ranges) {
  std::string out;
  size_t ranges = 0;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (ranges == max_ranges) return out + ",...";
    if (!out.empty()) out += ",";
    out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    ++ranges;
    i = j + 1;
  }
  return out;
}

Result<std::vector<std::string>> ExchangeCards(StoreClient& store, const std::string& prefix,
                                               int rank, int size, const std::string& card,
                                               const Deadline& deadline) {
  const std::string what = fmt::format("rendezvous '{}'", prefix);
  if (size < 1 || rank < 0 || rank >= size)
    return InvalidArgument(fmt::format("{}: rank {} is not in a world of size {}", what, rank, size));
  auto start = Clock::now();
  auto timed_out = [&](const Status& s) -> Status {
    if (s.code() != Code::kDeadlineExceeded) return s.WithContext(what);
    return DeadlineExceeded(Missing(store, prefix, size, Since(start), what));
  };

  WEFT_RETURN_IF_ERROR(store.Set(CardKey(prefix, rank), card, deadline).WithContext(what));
  if (rank == 0) {
    std::vector<std::string> cards(size);
    cards[0] = card;
    for (int r = 1; r < size; ++r) {
      auto c = store.Get(CardKey(prefix, r), deadline);
      if (!c.ok()) return timed_out(c.status());
      cards[r] = std::move(c.value());
    }
    WEFT_RETURN_IF_ERROR(store.Set(prefix + "/all", EncodeCards(cards), deadline).WithContext(what));
    return cards;
  }
  auto all = store.Get(prefix + "/all", deadline);
  if (!all.ok()) return timed_out(all.status());
  return DecodeCards(*all, size, what);
}

Status Barrier(StoreClient& store, const std::string& prefix, int size,
               const Deadline& deadline) {
  const std::string what = fmt::format("barrier '{}'", prefix);
  if (size < 1) return InvalidArgument(fmt::format("{}: world size {}", what, size));
  auto start = Clock::now();
  auto n = store.Add(prefix + "/arrived", 1, deadline);
  if (!n.ok()) return n.status().WithContext(what);
  // The last to arrive opens the barrier for everyone parked on "done".
  if (*n == size) WEFT_RETURN_IF_ERROR(store.Set(prefix + "/done", "", deadline).WithContext(what));
  if (*n > size)
    return InvalidUsage(fmt::format("{}: {} ranks arrived in a world of size {} (prefix reused?)",
                                    what, *n, size));
  auto done = store.Get(prefix + "/done", deadline);
  if (done.ok()) return Status::Ok();
  if (done.status().code() != Code::kDeadlineExceeded) return done.status().WithContext(what);
  auto now = store.Add(prefix + "/arrived", 0, Deadline::AfterSeconds(10));
  return DeadlineExceeded(fmt::format("{}: timed out after {:.1f} s with {} of {} ranks arrived",
                                      what, Since(start),
                                      now.ok() ? std::to_string(*now) : std::string("?"), size));
}

}  // namespace weft::bootstrap
