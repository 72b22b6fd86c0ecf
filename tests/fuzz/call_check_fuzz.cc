// WEFT_CHECK_CALLS' comparison of the call fingerprints all ranks sent (comm/call_check.h):
// the bytes come from peers. The first byte picks the world size (1..64), the second this
// rank; the rest are the fingerprints (zero-padded). Properties: no crash; Ok exactly when
// every fingerprint decodes to the same call; otherwise InvalidUsage whose text names this
// rank and stays short whatever the values.
#include <string>
#include <vector>

#include "comm/call_check.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft::comm;
  weft::fuzz::Reader in(data, size);
  const int world = 1 + in.Byte() % 64;
  const int self = in.Byte() % world;
  std::vector<uint8_t> all(world * kCallFingerprintBytes, 0);
  std::string_view rest = in.Rest();
  for (size_t i = 0; i < rest.size() && i < all.size(); ++i)
    all[i] = static_cast<uint8_t>(rest[i]);

  bool agree = true;
  for (int r = 1; r < world; ++r)
    agree = agree && DecodeFingerprint(all.data() + r * kCallFingerprintBytes) ==
                         DecodeFingerprint(all.data());
  weft::Status st = CompareFingerprints(all.data(), world, self, 1);
  WEFT_FUZZ_CHECK(st.ok() == agree);
  if (!st.ok()) {
    WEFT_FUZZ_CHECK(st.code() == weft::Code::kInvalidUsage);
    WEFT_FUZZ_CHECK(st.message().rfind("rank " + std::to_string(self) + ":", 0) == 0);
    WEFT_FUZZ_CHECK(st.message().size() < 1500);
  }
  return 0;
}
