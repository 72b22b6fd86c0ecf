// weftrun's command line: what to start, how many times, and how to supervise it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weftrun {

struct Options {
  int nranks = 1;
  // Where weftrun's rendezvous store listens; port 0 picks a free port.
  std::string store_addr = "127.0.0.1:0";
  double grace_s = 5.0;    // SIGTERM -> SIGKILL delay when tearing the job down
  double timeout_s = 0.0;  // whole-job limit; 0: none
  bool prefix = true;      // "[R] " before every output line
  bool keep_going = false; // a failing rank does not stop the others
  std::vector<std::pair<std::string, std::string>> extra_env;  // -x NAME=VALUE
  std::vector<std::string> command;  // program and its arguments
};

// Parses argv. On --help or a usage error, prints to stdout/stderr and returns the exit
// code weftrun should return (0 for --help); otherwise returns the options.
struct ParseOutcome {
  std::optional<Options> options;
  int exit_code = 0;
};
ParseOutcome ParseOptions(int argc, char** argv);

}  // namespace weftrun
