// The texts weftCommShrink's agreement exchanges through the store (shrink.h), and the
// reading of lost ranks out of an error text. Both come from other processes (the store,
// a peer's abort frame), so the decoders are total: any bytes give a value or an error,
// never a crash (tests/fuzz/shrink_codec_fuzz.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace weft::comm {

// What one survivor posts: its exclude list, and the ranks its failure names as lost.
// Text: "x=1,3;l=2".
struct ShrinkPost {
  std::vector<int> listed;
  std::vector<int> lost;
};
std::string EncodeShrinkPost(const ShrinkPost& p);
// Every rank in [0, size).
Result<ShrinkPost> DecodeShrinkPost(const std::string& text, int size);

// The agreed outcome, published by the first survivor to finish: who decided, and each
// excluded rank with a one-letter reason. Text: "<decider>|<rank>:<why>,...".
struct ShrinkDecision {
  int decider = -1;
  std::map<int, char> excluded;
};
std::string EncodeShrinkDecision(const ShrinkDecision& d);
// Every rank in [0, size); a reason is any one byte but ',' (the caller explains unknown
// ones generically).
Result<ShrinkDecision> DecodeShrinkDecision(const std::string& text, int size);

// The ranks in [0, size) that `failure` (a communicator's error text) says were lost:
// "lost connection to rank R" (a closed or reset link, a dead process), also when quoted
// from a peer's abort frame. Hints only: a named rank that still takes part is kept.
std::vector<int> LostRanksNamedIn(const std::string& failure, int size);

}  // namespace weft::comm
