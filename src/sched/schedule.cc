// Names, buffer sizes and the text dump of the schedule IR (see schedule.h).
#include "sched/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

namespace weft::sched {

const char* BufName(Buf b) {
  switch (b) {
    case Buf::kInput:
      return "input";
    case Buf::kOutput:
      return "output";
    case Buf::kScratch:
      return "scratch";
  }
  return "?";
}

namespace {

std::string SliceString(const Slice& s) {
  return fmt::format("{}[{}+{}]", BufName(s.buf), s.offset, s.count);
}

bool IsRoot(const CollectiveSpec& spec) { return spec.rank == spec.root; }

}  // namespace

std::optional<Collective> CollectiveFromName(std::string_view name) {
  for (int i = 0; i < kNumCollectives; ++i) {
    const auto c = static_cast<Collective>(i);
    if (name == CollectiveName(c)) return c;
  }
  return std::nullopt;
}

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "allreduce";
    case Collective::kReduce:
      return "reduce";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kGather:
      return "gather";
    case Collective::kScatter:
      return "scatter";
    case Collective::kBarrier:
      return "barrier";
  }
  return "unknown";
}

// Buffers that only matter at the root (broadcast's and scatter's input, reduce's and
// gather's output) count 0 elements on the other ranks: a schedule must not touch them
// there, because NCCL lets non-roots pass null or short buffers.
size_t InputCount(const CollectiveSpec& spec) {
  const size_t all = static_cast<size_t>(spec.size) * spec.count;
  switch (spec.coll) {
    case Collective::kAllReduce:
    case Collective::kReduce:
    case Collective::kAllGather:
    case Collective::kGather:
      return spec.count;
    case Collective::kBroadcast:
      return IsRoot(spec) ? spec.count : 0;
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return all;
    case Collective::kScatter:
      return IsRoot(spec) ? all : 0;
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

size_t OutputCount(const CollectiveSpec& spec) {
  const size_t all = static_cast<size_t>(spec.size) * spec.count;
  switch (spec.coll) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kReduceScatter:
    case Collective::kScatter:
      return spec.count;
    case Collective::kReduce:
      return IsRoot(spec) ? spec.count : 0;
    case Collective::kAllGather:
    case Collective::kAllToAll:
      return all;
    case Collective::kGather:
      return IsRoot(spec) ? all : 0;
    case Collective::kBarrier:
      return 0;
  }
  return 0;
}

long long InPlaceOffset(const CollectiveSpec& spec) {
  const long long block = static_cast<long long>(spec.rank) * static_cast<long long>(spec.count);
  switch (spec.coll) {
    case Collective::kAllGather:
    case Collective::kGather:
      return block;
    case Collective::kReduceScatter:
    case Collective::kScatter:
      return -block;
    default:
      return 0;
  }
}

Topology Topology::FromHostIds(const std::vector<std::string>& ids) {
  Topology t;
  std::map<std::string, int> index;
  for (const std::string& id : ids) {
    auto it = index.emplace(id, static_cast<int>(index.size())).first;
    t.host_of.push_back(it->second);
  }
  return t;
}

Topology Topology::Contiguous(const std::vector<int>& ranks_per_host) {
  Topology t;
  for (size_t h = 0; h < ranks_per_host.size(); ++h) {
    for (int i = 0; i < ranks_per_host[h]; ++i) t.host_of.push_back(static_cast<int>(h));
  }
  return t;
}

int Topology::NumHosts() const {
  int n = 0;
  for (int h : host_of) n = std::max(n, h + 1);
  return n;
}

std::vector<std::vector<int>> Topology::Hosts() const {
  std::vector<std::vector<int>> hosts(NumHosts());
  for (size_t r = 0; r < host_of.size(); ++r) hosts[host_of[r]].push_back(static_cast<int>(r));
  return hosts;
}

std::string Topology::Describe() const {
  const auto hosts = Hosts();
  bool uniform = true;
  std::string sizes;
  for (const auto& h : hosts) {
    uniform = uniform && h.size() == hosts[0].size();
    sizes += fmt::format("{}{}", sizes.empty() ? "" : ",", h.size());
  }
  if (hosts.empty()) return "0 hosts";
  if (uniform) return fmt::format("{} hosts x {} ranks", hosts.size(), hosts[0].size());
  return fmt::format("{} hosts, ranks per host {}", hosts.size(), sizes);
}

std::string ToString(const Step& step) {
  switch (step.kind) {
    case StepKind::kSend:
      return fmt::format("send to {} {}", step.peer, SliceString(step.src));
    case StepKind::kRecv:
      return fmt::format("recv from {} {}", step.peer, SliceString(step.dst));
    case StepKind::kReduce:
      return fmt::format("reduce {} <- {}", SliceString(step.dst), SliceString(step.src));
    case StepKind::kCopy:
      return fmt::format("copy {} <- {}", SliceString(step.dst), SliceString(step.src));
    case StepKind::kSync:
      return fmt::format("sync with {}", step.peer);
    case StepKind::kPeerReduce:
      return fmt::format("reduce {} <- rank {} {}", SliceString(step.dst), step.peer,
                         SliceString(step.src));
    case StepKind::kPeerRead:
      return fmt::format("copy {} <- rank {} {}", SliceString(step.dst), step.peer,
                         SliceString(step.src));
    case StepKind::kPeerWrite:
      return fmt::format("copy rank {} {} <- {}", step.peer, SliceString(step.dst),
                         SliceString(step.src));
  }
  return "?";
}

std::string ToString(const Schedule& schedule) {
  std::string out =
      fmt::format("schedule: {} rounds, scratch {}{}\n", schedule.rounds.size(),
                  schedule.scratch_count, schedule.inplace_safe ? "" : ", not in-place safe");
  for (size_t r = 0; r < schedule.rounds.size(); ++r) {
    out += fmt::format("round {}:\n", r);
    for (const Step& step : schedule.rounds[r].steps) out += "  " + ToString(step) + "\n";
  }
  return out;
}

}  // namespace weft::sched
