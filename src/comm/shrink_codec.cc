#include "comm/shrink_codec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <regex>
#include <set>

namespace weft::comm {
namespace {

std::string JoinRanks(const std::vector<int>& ranks) {
  return fmt::format("{}", fmt::join(ranks, ","));
}

// "1,3,7" (or "" for none): decimal ranks in [0, size).
Result<std::vector<int>> ParseRanks(const std::string& text, int size) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    bool digits = !item.empty() && item.size() <= 9 &&
                  item.find_first_not_of("0123456789") == std::string::npos;
    long r = digits ? std::strtol(item.c_str(), nullptr, 10) : -1;
    if (r < 0 || r >= size) return ProtocolError(fmt::format("bad rank '{}' in '{}'", item, text));
    out.push_back(static_cast<int>(r));
    pos = comma + 1;
  }
  if (!text.empty() && text.back() == ',')
    return ProtocolError(fmt::format("bad rank list '{}'", text));
  return out;
}

}  // namespace

std::string EncodeShrinkPost(const ShrinkPost& p) {
  return fmt::format("x={};l={}", JoinRanks(p.listed), JoinRanks(p.lost));
}

Result<ShrinkPost> DecodeShrinkPost(const std::string& v, int size) {
  size_t semi = v.find(';');
  if (v.compare(0, 2, "x=") != 0 || semi == std::string::npos || v.compare(semi, 3, ";l=") != 0)
    return ProtocolError(fmt::format("malformed shrink post '{}'", v));
  ShrinkPost p;
  WEFT_ASSIGN_OR_RETURN(p.listed, ParseRanks(v.substr(2, semi - 2), size));
  WEFT_ASSIGN_OR_RETURN(p.lost, ParseRanks(v.substr(semi + 3), size));
  return p;
}

std::string EncodeShrinkDecision(const ShrinkDecision& d) {
  std::string out = fmt::format("{}|", d.decider);
  bool first = true;
  for (auto [r, why] : d.excluded) {
    out += fmt::format("{}{}:{}", first ? "" : ",", r, why);
    first = false;
  }
  return out;
}

Result<ShrinkDecision> DecodeShrinkDecision(const std::string& v, int size) {
  auto bad = [&] { return ProtocolError(fmt::format("malformed shrink decision '{}'", v)); };
  size_t bar = v.find('|');
  if (bar == std::string::npos) return bad();
  ShrinkDecision d;
  WEFT_ASSIGN_OR_RETURN(std::vector<int> decider, ParseRanks(v.substr(0, bar), size));
  if (decider.size() != 1) return bad();
  d.decider = decider[0];
  size_t pos = bar + 1;
  while (pos < v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    std::string item = v.substr(pos, comma - pos);
    size_t colon = item.find(':');
    // "<rank>:<one byte>": a rank is required (an empty one used to reach r.at(0)).
    if (colon == std::string::npos || colon == 0 || colon + 2 != item.size()) return bad();
    WEFT_ASSIGN_OR_RETURN(std::vector<int> r, ParseRanks(item.substr(0, colon), size));
    if (r.size() != 1 || d.excluded.count(r[0]) != 0) return bad();
    d.excluded[r[0]] = item[colon + 1];
    pos = comma + 1;
  }
  if (v.back() == ',') return bad();
  return d;
}

std::vector<int> LostRanksNamedIn(const std::string& failure, int size) {
  static const std::regex kLostRank("lost connection to rank ([0-9]{1,9})");
  std::set<int> found;
  for (auto it = std::sregex_iterator(failure.begin(), failure.end(), kLostRank);
       it != std::sregex_iterator(); ++it) {
    long r = std::strtol((*it)[1].str().c_str(), nullptr, 10);
    if (r >= 0 && r < size) found.insert(static_cast<int>(r));
  }
  return {found.begin(), found.end()};
}

}  // namespace weft::comm
