// FirstSlurmHost and SlurmTasksOnNode: just enough of Slurm's hostlist grammar to find
// the first host ("node[01-04,07],gpu5" -> "node01", "a-[1-3]b" -> "a-1b").
#include "bootstrap/slurm_hostlist.h"

#include <cctype>

#include "bootstrap/launcher_env.h"

namespace weft::bootstrap {
namespace {

Status BadList(const std::string& list, const std::string& why) {
  return InvalidArgument("Slurm nodelist '" + list + "': " + why);
}

}  // namespace

Result<std::string> FirstSlurmHost(const std::string& nodelist) {
  // Walk the first comma-separated entry (commas inside brackets separate ranges, not
  // hosts). Text outside brackets is copied; from each bracket group, only the first
  // item of its first range is kept, with its zero padding as written.
  std::string host;
  size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',') {
    char c = nodelist[i];
    if (c == ']') return BadList(nodelist, "unbalanced ']'");
    if (c != '[') {
      host.push_back(c);
      ++i;
      continue;
    }
    size_t close = nodelist.find(']', i);
    if (close == std::string::npos) return BadList(nodelist, "unbalanced '['");
    std::string group = nodelist.substr(i + 1, close - i - 1);
    if (group.find('[') != std::string::npos) return BadList(nodelist, "nested '['");
    size_t end = group.find_first_of(",-");
    std::string first = group.substr(0, end);
    if (first.empty()) return BadList(nodelist, "empty range in '[" + group + "]'");
    for (char d : first)
      if (!std::isdigit(static_cast<unsigned char>(d)))
        return BadList(nodelist, "non-numeric range in '[" + group + "]'");
    host += first;
    i = close + 1;
  }
  if (host.empty()) return BadList(nodelist, "no host");
  return host;
}

Result<int> SlurmTasksOnNode(const std::string& spec, int node_index) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("SLURM_TASKS_PER_NODE='" + spec + "': " + why);
  };
  auto number = [](const std::string& s, long* v) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    *v = std::stol(s);
    return true;
  };
  long node = 0;
  size_t i = 0;
  while (i <= spec.size()) {
    size_t comma = spec.find(',', i);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = spec.substr(i, comma - i);
    long count = 0, repeat = 1;
    size_t paren = item.find("(x");
    if (paren == std::string::npos) {
      if (!number(item, &count)) return bad("bad item '" + item + "'");
    } else {
      if (item.back() != ')' || !number(item.substr(0, paren), &count) ||
          !number(item.substr(paren + 2, item.size() - paren - 3), &repeat) || repeat < 1)
        return bad("bad item '" + item + "'");
    }
    if (node_index < node + repeat) {
      if (count < 1) return bad("zero tasks on a node");
      return static_cast<int>(count);
    }
    node += repeat;
    i = comma + 1;
  }
  return bad("no entry for node " + std::to_string(node_index));
}

}  // namespace weft::bootstrap
