// Communicator::Split: a new communicator of the ranks that pass the same color, built
// over this one (its cards are exchanged by an allgather on this communicator).
#include <algorithm>

#include "comm/communicator.h"

namespace weft::comm {

using sched::Collective;

Result<std::vector<std::string>> Communicator::AllGatherStrings(const std::string& mine) {
  int64_t len = static_cast<int64_t>(mine.size());
  std::vector<int64_t> lens(size_);
  WEFT_RETURN_IF_ERROR(
      Run(MakeCollective(Collective::kAllGather, &len, lens.data(), 1, DataType::kInt64)));
  size_t width = static_cast<size_t>(*std::max_element(lens.begin(), lens.end()));
  std::string padded = mine;
  padded.resize(width);
  std::vector<char> all(width * size_);
  WEFT_RETURN_IF_ERROR(Run(
      MakeCollective(Collective::kAllGather, padded.data(), all.data(), width, DataType::kUint8)));
  std::vector<std::string> out(size_);
  for (int r = 0; r < size_; ++r) {
    if (lens[r] < 0 || static_cast<size_t>(lens[r]) > width)
      return Internal("allgather of strings returned a bad length");
    out[r].assign(all.data() + r * width, static_cast<size_t>(lens[r]));
  }
  return out;
}

Result<std::unique_ptr<Communicator>> Communicator::Split(int color, int key,
                                                          const CommOptions& options) {
  // 1. Everyone learns everyone's (color, key).
  int64_t mine[2] = {color < 0 ? -1 : color, key};
  std::vector<int64_t> all(2 * size_);
  WEFT_RETURN_IF_ERROR(
      Run(MakeCollective(Collective::kAllGather, mine, all.data(), 2, DataType::kInt64))
          .WithContext("split"));
  const uint64_t split_index = split_count_.fetch_add(1);

  // 2. The new group: same color, ordered by (key, old rank).
  std::vector<int> members;
  if (color >= 0) {
    for (int r = 0; r < size_; ++r)
      if (all[2 * r] == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
  }

  // 3. The new mesh exchanges its cards over this communicator. Mesh::Connect calls the
  //    allgather exactly once, so ranks without a color take part with an empty card.
  auto gather = [this, members](const std::string& card) -> Result<std::vector<std::string>> {
    WEFT_ASSIGN_OR_RETURN(std::vector<std::string> cards, AllGatherStrings(card));
    std::vector<std::string> picked;
    for (int r : members) picked.push_back(std::move(cards[r]));
    return picked;
  };
  if (color < 0) {
    WEFT_ASSIGN_OR_RETURN(std::vector<std::string> ignored, AllGatherStrings(""));
    (void)ignored;
    return std::unique_ptr<Communicator>();
  }
  int new_rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) -
                                  members.begin());
  // Same id on every member: derived from the parent's id, the split's index and color.
  uint64_t h = id_ ^ (0x9e3779b97f4a7c15ull * (split_index + 1));
  h ^= static_cast<uint64_t>(color) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  // The child shares this communicator's store connection (weftCommShrink uses it) and
  // its job key (its tcp connections authenticate with it), and, unless the options
  // give one, its current timeout.
  CommOptions child = options;
  if (child.timeout_s <= 0) child.timeout_s = timeout_s();
  return Create(new_rank, static_cast<int>(members.size()), h, gather, bootstrap_, child);
}

}  // namespace weft::comm
