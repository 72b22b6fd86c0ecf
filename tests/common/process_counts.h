// What a process holds, for leak checks: open file descriptors and file mappings,
// counted from /proc/self before and after the code under test.
#pragma once

#include <dirent.h>

#include <fstream>
#include <sstream>
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

// Mappings of files (memfds, shm segments, libraries): what a leaked weft buffer or
// segment leaves behind. Anonymous mappings (inode 0) are not counted: malloc's and the
// sanitizers' runtimes map and unmap them on their own (ASan's allocator regions and
// quarantine), which would make the count move with no leak.
inline int CountMappings() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode;
    if (fields >> range >> perms >> offset >> dev >> inode && inode != "0") ++n;
  }
  return n;
}

}  // namespace weft::testing
