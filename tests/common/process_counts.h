// What a process holds, for leak checks: open file descriptors and memory mappings,
// counted from /proc/self before and after the code under test.
#pragma once

#include <dirent.h>

#include <fstream>
#include <string>

namespace weft::testing {

inline int CountOpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;  // not the descriptor opendir itself holds
}

inline int CountMappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) ++n;
  return n;
}

}  // namespace weft::testing
