// FirstSlurmHost (bootstrap/launcher_env.h) on SLURM_STEP_NODELIST/SLURM_JOB_NODELIST
// text. Two halves per input:
//  - the input as a nodelist: never crashes; a host it returns is non-empty and free of
//    '[', ']' and ','; a list without brackets yields its first comma-separated entry;
//    errors are InvalidArgument;
//  - the input as the parts of a well-formed list, "pre[07-12,3]mid[5]post,other...":
//    the result is exactly "pre07mid5post" (first item of each group, padding kept).
#include <string>

#include "bootstrap/launcher_env.h"
#include "fuzz_util.h"

using weft::bootstrap::FirstSlurmHost;

namespace {

// Host name characters Slurm allows outside brackets.
std::string HostText(weft::fuzz::Reader& in, size_t max) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789-._";
  std::string s;
  for (size_t n = in.Byte() % (max + 1); n > 0; --n) s.push_back(kChars[in.Byte() % (sizeof(kChars) - 1)]);
  return s;
}

std::string Digits(weft::fuzz::Reader& in) {
  std::string s;
  for (size_t n = 1 + in.Byte() % 4; n > 0; --n) s.push_back(static_cast<char>('0' + in.Byte() % 10));
  return s;
}

void RawList(const std::string& list) {
  auto host = FirstSlurmHost(list);
  if (!host.ok()) {
    WEFT_FUZZ_CHECK(host.status().code() == weft::Code::kInvalidArgument);
    return;
  }
  WEFT_FUZZ_CHECK(!host->empty() && host->find_first_of("[],") == std::string::npos);
  if (list.find_first_of("[]") == std::string::npos)
    WEFT_FUZZ_CHECK(*host == list.substr(0, list.find(',')));
}

void BuiltList(weft::fuzz::Reader& in) {
  std::string list, want;
  for (int groups = in.Byte() % 3; groups >= 0; --groups) {
    std::string text = HostText(in, 6);
    list += text;
    want += text;
    if (groups == 0) break;
    // "[a]", "[a-b]" or "[a-b,c,...]": only `a` counts.
    std::string first = Digits(in);
    list += "[" + first;
    want += first;
    if (in.Byte() & 1) list += "-" + Digits(in);
    for (size_t n = in.Byte() % 3; n > 0; --n) list += "," + Digits(in);
    list += "]";
  }
  if (want.empty()) return;  // "" or "[...]"-less emptiness is rejected, rightly
  if (in.Byte() & 1) list += "," + HostText(in, 8);
  auto host = FirstSlurmHost(list);
  WEFT_FUZZ_CHECK(host.ok() && *host == want);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  RawList(std::string(reinterpret_cast<const char*>(data), size));
  weft::fuzz::Reader in(data, size);
  BuiltList(in);
  return 0;
}
