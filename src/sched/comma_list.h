// The list syntax shared by WEFT_ALGO and WEFT_COST_MODEL: comma-separated entries,
// surrounding blanks ignored, names compared in lower case.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace weft::sched {

// `s` without leading and trailing blanks, lower-cased.
inline std::string TrimLower(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  std::string out(s.substr(b, e - b));
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// The entries of "a, b,,c" (empty ones kept: callers decide whether they matter).
inline std::vector<std::string> SplitCommas(std::string_view s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    parts.push_back(TrimLower(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return parts;
}

}  // namespace weft::sched
