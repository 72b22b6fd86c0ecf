// SlurmTasksOnNode (bootstrap/slurm_hostlist.h) on SLURM_TASKS_PER_NODE text
// ("2(x3),1"). Two halves per input:
//  - first byte: the node index, the rest: the variable's text. Never crashes; a count
//    it returns is between 1 and 999999999 (9 digits at most); errors are
//    InvalidArgument naming the variable;
//  - the input as a list of (count, repeat) pairs, written out in Slurm's syntax: every
//    node index gets exactly the count of the expansion, and the index one past the
//    end is an error.
#include <string>
#include <vector>

#include "bootstrap/slurm_hostlist.h"
#include "fuzz_util.h"

using weft::bootstrap::SlurmTasksOnNode;

namespace {

void Raw(int node, const std::string& spec) {
  auto n = SlurmTasksOnNode(spec, node);
  if (n.ok()) {
    WEFT_FUZZ_CHECK(*n >= 1 && *n <= 999999999);
  } else {
    WEFT_FUZZ_CHECK(n.status().code() == weft::Code::kInvalidArgument);
    WEFT_FUZZ_CHECK(n.status().message().find("SLURM_TASKS_PER_NODE") != std::string::npos);
  }
}

void Built(weft::fuzz::Reader& in) {
  std::string spec;
  std::vector<int> per_node;  // the expansion
  for (size_t items = 1 + in.Byte() % 6; items > 0; --items) {
    int count = 1 + static_cast<int>(in.U32() % 999999999u);
    if (!spec.empty()) spec += ",";
    spec += std::to_string(count);
    if (in.Byte() & 1) {
      int repeat = 1 + in.Byte() % 8;
      spec += "(x" + std::to_string(repeat) + ")";
      per_node.insert(per_node.end(), repeat, count);
    } else {
      per_node.push_back(count);
    }
  }
  for (size_t node = 0; node < per_node.size(); ++node) {
    auto n = SlurmTasksOnNode(spec, static_cast<int>(node));
    WEFT_FUZZ_CHECK(n.ok() && *n == per_node[node]);
  }
  WEFT_FUZZ_CHECK(!SlurmTasksOnNode(spec, static_cast<int>(per_node.size())).ok());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Reader in(data, size);
  const int node = in.Byte();
  std::string spec(in.Rest());
  Raw(node, spec);
  Raw(0, spec);
  weft::fuzz::Reader again(data, size);
  Built(again);
  return 0;
}
