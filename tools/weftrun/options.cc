#include "options.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace weftrun {
namespace {

// "NAME=VALUE" -> pair; NAME must be a plausible variable name so a typo such as
// "-x =1" fails loudly instead of exporting garbage.
// NAME=VALUE, or NAME alone for weftrun's own value of NAME (mpirun's -x NAME).
std::optional<std::pair<std::string, std::string>> SplitAssignment(const std::string& s) {
  auto eq = s.find('=');
  if (eq == 0 || s.empty()) return std::nullopt;
  std::string name = s.substr(0, eq);
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
  }
  if (std::isdigit(static_cast<unsigned char>(name[0]))) return std::nullopt;
  if (eq != std::string::npos) return std::make_pair(name, s.substr(eq + 1));
  const char* mine = std::getenv(name.c_str());
  if (mine == nullptr) return std::nullopt;
  return std::make_pair(name, std::string(mine));
}

}  // namespace

ParseOutcome ParseOptions(int argc, char** argv) {
  Options o;
  std::vector<std::string> assignments;
  CLI::App app{"weftrun: start N local ranks of a weft program, with a rendezvous store.\nUsage: weftrun -n N [options] [--] PROG [ARGS...]"};
  app.set_version_flag("--version", "weftrun (weft " WEFT_VERSION ")");
  app.add_option("-n,--np", o.nranks, "number of ranks to start")
      ->required()
      ->check(CLI::Range(1, 4096));
  app.add_option("--store-addr", o.store_addr,
                 "address the rendezvous store listens on (host:port, port 0 = any)")
      ->capture_default_str();
  // Explicit ranges (up to a year): CLI11's NonNegativeNumber prints DBL_MAX's 300 digits.
  app.add_option("--grace", o.grace_s, "seconds between SIGTERM and SIGKILL on teardown")
      ->check(CLI::Range(0.0, 3.2e7))
      ->capture_default_str();
  app.add_option("--timeout", o.timeout_s, "kill the job and exit 124 after SEC seconds (0: none)")
      ->check(CLI::Range(0.0, 3.2e7));
  app.add_flag("!--no-prefix", o.prefix, "do not prefix output lines with \"[R] \"");
  app.add_flag("--keep-going", o.keep_going,
               "when a rank fails, let the others run on (exit code: the first failure's)");
  app.add_option("-x", assignments,
                 "NAME=VALUE: set an environment variable in every rank; NAME alone: pass "
                 "weftrun's own value (as mpirun -x)")
      ->allow_extra_args(false);
  // Everything from the first positional on belongs to the program, even things that
  // look like weftrun options ("weftrun -n 2 prog -n 5").
  app.prefix_command();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);  // prints help or the error
    return {std::nullopt, rc == 0 ? 0 : 2};
  }
  o.command = app.remaining();
  if (!o.command.empty() && o.command.front() == "--") o.command.erase(o.command.begin());
  if (o.command.empty()) {
    std::fprintf(stderr, "weftrun: no program given\n%s", app.help().c_str());
    return {std::nullopt, 2};
  }
  for (const auto& a : assignments) {
    auto kv = SplitAssignment(a);
    if (!kv) {
      std::fprintf(stderr,
                   "weftrun: -x expects NAME=VALUE, or NAME of a variable set in weftrun's "
                   "environment, got '%s'\n", a.c_str());
      return {std::nullopt, 2};
    }
    o.extra_env.push_back(*kv);
  }
  return {std::move(o), 0};
}

}  // namespace weftrun
