// The texts weftCommShrink reads from the store (comm/shrink_codec.h): a survivor's post
// and the published decision, plus the lost ranks read out of an error text (which can
// quote a peer's abort frame). The first byte picks the world size (1..64); the rest is
// the text. Properties: no decoder crashes; whatever a decoder accepts has every rank in
// [0, size) and survives encode -> decode unchanged.
#include <map>
#include <string>
#include <vector>

#include "comm/shrink_codec.h"
#include "fuzz_util.h"

namespace {

using weft::comm::DecodeShrinkDecision;
using weft::comm::DecodeShrinkPost;
using weft::comm::EncodeShrinkDecision;
using weft::comm::EncodeShrinkPost;

bool InRange(const std::vector<int>& ranks, int size) {
  for (int r : ranks)
    if (r < 0 || r >= size) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  const int world = 1 + in.Byte() % 64;
  const std::string text(in.Take(size));

  auto post = DecodeShrinkPost(text, world);
  if (post.ok()) {
    WEFT_FUZZ_CHECK(InRange(post->listed, world) && InRange(post->lost, world));
    auto again = DecodeShrinkPost(EncodeShrinkPost(*post), world);
    WEFT_FUZZ_CHECK(again.ok());
    WEFT_FUZZ_CHECK(again->listed == post->listed && again->lost == post->lost);
  }

  auto decision = DecodeShrinkDecision(text, world);
  if (decision.ok()) {
    WEFT_FUZZ_CHECK(decision->decider >= 0 && decision->decider < world);
    for (auto [r, why] : decision->excluded) WEFT_FUZZ_CHECK(r >= 0 && r < world);
    auto again = DecodeShrinkDecision(EncodeShrinkDecision(*decision), world);
    WEFT_FUZZ_CHECK(again.ok());
    WEFT_FUZZ_CHECK(again->decider == decision->decider &&
                    again->excluded == decision->excluded);
  }

  std::vector<int> lost = weft::comm::LostRanksNamedIn(text, world);
  WEFT_FUZZ_CHECK(InRange(lost, world));
  return 0;
}
