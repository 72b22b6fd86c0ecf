// LocalHostId: which processes count as "on the same host" for shm.
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <string>

#include "transport/mesh.h"

namespace weft::transport {
namespace {

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

// hostname | kernel boot id | network namespace. The boot id separates machines that
// share a hostname (and a rebooted one from its old self); the network namespace
// separates containers and our netns test "hosts" on one machine, which cannot reach
// each other's loopback and must be treated as different hosts.
std::string LocalHostId() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) name[0] = '\0';
  std::string netns;
  char link[256];
  ssize_t n = readlink("/proc/self/ns/net", link, sizeof(link) - 1);
  if (n > 0) netns.assign(link, static_cast<size_t>(n));  // "net:[4026531840]"
  std::string id =
      std::string(name) + "|" + ReadFirstLine("/proc/sys/kernel/random/boot_id") + "|" + netns;
  // The id travels in a card as one token: no spaces or control characters.
  for (char& c : id)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '_';
  return id;
}

}  // namespace weft::transport
