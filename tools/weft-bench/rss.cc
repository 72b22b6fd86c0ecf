#include "rss.h"

#include <fstream>
#include <string>

namespace weftbench {

RssKiB ReadRss() {
  RssKiB r;
  std::ifstream in("/proc/self/status");
  // Lines look like "VmRSS:\t   12345 kB"; stoll skips the blanks and stops at " kB".
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) r.now = std::stoll(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0) r.peak = std::stoll(line.substr(6));
  }
  return r;
}

}  // namespace weftbench
