#include "diagnose.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace weft::doctor {
namespace {

bool IsPointToPoint(const Op& op) { return op.op == "send" || op.op == "recv"; }

// The last collective a rank started (point-to-point calls number their own sequences).
const Op* LastCollective(const Dump& d) {
  const Op* last = nullptr;
  for (const Op& op : d.ops)
    if (!IsPointToPoint(op) && (last == nullptr || op.seq >= last->seq)) last = &op;
  return last;
}

std::string Describe(const Op& op) {
  return fmt::format("{} seq {} ({} bytes {}, {})", op.op, op.seq, op.bytes, op.dtype,
                     op.algo.empty() ? "?" : op.algo);
}

std::string RankList(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

}  // namespace

std::optional<Dump> ParseDump(const std::string& text, std::string* error) {
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("weft_flight_recorder", 0) != 1) {
      *error = "not a weft flight-recorder dump (no \"weft_flight_recorder\": 1)";
      return std::nullopt;
    }
    Dump d;
    d.comm = j.at("comm").get<std::string>();
    d.rank = j.at("rank").get<int>();
    d.size = j.at("size").get<int>();
    d.pid = j.value("pid", 0);
    d.host = j.value("host", "");
    d.reason = j.value("reason", "");
    d.time_ns = j.value("time_ns", int64_t{0});
    if (d.size < 1 || d.rank < 0 || d.rank >= d.size) {
      *error = fmt::format("rank {} of size {} is out of range", d.rank, d.size);
      return std::nullopt;
    }
    for (const auto& e : j.at("entries")) {
      Op op;
      op.seq = e.at("seq").get<uint64_t>();
      op.op = e.at("op").get<std::string>();
      op.bytes = e.value("bytes", uint64_t{0});
      op.dtype = e.value("dtype", "");
      op.algo = e.value("algo", "");
      op.state = e.at("state").get<std::string>();
      op.round = e.value("round", -1);
      op.waiting_for = e.value("waiting_for", -1);
      op.start_ns = e.value("start_ns", int64_t{0});
      op.end_ns = e.value("end_ns", int64_t{0});
      op.status = e.value("status", "");
      d.ops.push_back(std::move(op));
    }
    return d;
  } catch (const std::exception& ex) {
    *error = ex.what();
    return std::nullopt;
  }
}

std::vector<Verdict> Diagnose(const std::vector<Dump>& dumps) {
  std::map<std::string, std::vector<const Dump*>> by_comm;
  for (const Dump& d : dumps) by_comm[d.comm].push_back(&d);
  std::vector<Verdict> out;
  for (auto& [comm, list] : by_comm) {
    Verdict v;
    v.comm = comm;
    for (const Dump* d : list) v.size = std::max(v.size, d->size);
    std::map<int, const Dump*> by_rank;
    for (const Dump* d : list) {
      auto it = by_rank.find(d->rank);
      if (it == by_rank.end() || d->time_ns > it->second->time_ns) by_rank[d->rank] = d;
    }
    for (int r = 0; r < v.size; ++r)
      if (!by_rank.count(r)) v.missing.push_back(r);

    uint64_t frontier = 0;
    bool any = false;
    for (auto& [r, d] : by_rank)
      if (const Op* last = LastCollective(*d)) {
        frontier = any ? std::max(frontier, last->seq) : last->seq;
        any = true;
      }

    const Op* first_failure = nullptr;
    int first_failure_rank = -1;
    std::map<int, std::vector<int>> waited_by;  // rank -> ranks waiting for it
    const Op* frontier_op = nullptr;
    for (auto& [r, d] : by_rank) {
      const Op* last = LastCollective(*d);
      if (last == nullptr) {
        v.ranks.push_back(fmt::format("rank {}: no collective recorded", r));
        if (any) v.behind.push_back(r);
        continue;
      }
      if (last->seq == frontier) frontier_op = last;
      std::string where;
      if (last->state == "running") {
        where = fmt::format("inside {}, round {}", Describe(*last), last->round);
        if (last->waiting_for >= 0) {
          where += fmt::format(", waiting for rank {}", last->waiting_for);
          waited_by[last->waiting_for].push_back(r);
        }
      } else if (last->state == "failed") {
        where = fmt::format("{} failed: {}", Describe(*last), last->status);
      } else {
        where = fmt::format("last finished {}; now outside weft", Describe(*last));
      }
      if (last->seq < frontier) {
        v.behind.push_back(r);
        where += fmt::format(" — BEHIND (others reached seq {})", frontier);
      }
      v.ranks.push_back(fmt::format("rank {} (pid {} on {}, dump: {}): {}", r, d->pid, d->host,
                                    d->reason, where));
      for (const Op& op : d->ops)
        if (op.state == "failed" &&
            (first_failure == nullptr || op.end_ns < first_failure->end_ns)) {
          first_failure = &op;
          first_failure_rank = r;
        }
    }

    if (!v.missing.empty()) {
      v.summary = fmt::format(
          "rank(s) {} left no dump: dead, hung outside weft, or not signalled{}", RankList(v.missing),
          v.behind.empty() ? "" : fmt::format("; rank(s) {} are behind", RankList(v.behind)));
    } else if (!v.behind.empty()) {
      std::string waiting;
      for (int b : v.behind)
        if (waited_by.count(b))
          waiting += fmt::format("; rank(s) {} wait for rank {}", RankList(waited_by[b]), b);
      v.summary = fmt::format("rank(s) {} are behind: they never reached {}{}",
                              RankList(v.behind),
                              frontier_op ? Describe(*frontier_op) : fmt::format("seq {}", frontier),
                              waiting);
    } else if (first_failure != nullptr) {
      v.summary = fmt::format("first failure: rank {} in {}: {}", first_failure_rank,
                              Describe(*first_failure), first_failure->status);
    } else if (!waited_by.empty()) {
      std::string edges;
      for (auto& [target, waiters] : waited_by)
        edges += fmt::format("{}{} -> {}", edges.empty() ? "" : ", ", RankList(waiters), target);
      v.summary = fmt::format(
          "every rank is in {}, none behind; waits (waiter -> awaited): {}. A rank that waits "
          "for one that is itself waiting in the same call points at a transport problem",
          frontier_op ? Describe(*frontier_op) : "the same call", edges);
    } else {
      v.summary = "no rank is behind, waiting or failed";
    }
    out.push_back(std::move(v));
  }
  return out;
}

nlohmann::json ToJson(const std::vector<Verdict>& verdicts) {
  nlohmann::json j = nlohmann::json::array();
  for (const Verdict& v : verdicts)
    j.push_back({{"comm", v.comm}, {"size", v.size}, {"missing", v.missing},
                 {"behind", v.behind}, {"ranks", v.ranks}, {"verdict", v.summary}});
  return j;
}

}  // namespace weft::doctor
