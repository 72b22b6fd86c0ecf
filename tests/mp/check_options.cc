#include "check_options.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "check_dtypes.h"

namespace check {
namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool ParseNumber(const std::string& s, long long* out) {
  char* end = nullptr;
  *out = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && *end == '\0' && *out >= 0;
}

// Parses a comma list with `one`, reporting the first bad item.
template <typename T, typename F>
bool ParseList(const std::string& flag, const std::string& value, std::vector<T>* out, F one) {
  out->clear();
  for (const auto& item : SplitCommas(value)) {
    T v;
    if (!one(item, &v)) {
      std::fprintf(stderr, "collectives_check: %s: unknown value '%s'\n", flag.c_str(),
                   item.c_str());
      return false;
    }
    out->push_back(v);
  }
  return true;
}

}  // namespace

bool ParseOptions(int argc, char** argv, Options* o) {
  o->colls = AllColls();
  o->dtypes = AllDTypes();
  o->ops = {weftSum, weftProd, weftMin, weftMax, weftAvg};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto eq = arg.find('=');
    std::string flag = arg.substr(0, eq);
    std::string val = eq == std::string::npos ? "" : arg.substr(eq + 1);
    bool ok = true;
    if (flag == "--colls") {
      ok = ParseList(flag, val, &o->colls, ParseColl);
    } else if (flag == "--dtypes") {
      ok = ParseList(flag, val, &o->dtypes, ParseDType);
    } else if (flag == "--ops") {
      ok = ParseList(flag, val, &o->ops, ParseOp);
    } else if (flag == "--modes") {
      ok = ParseList(flag, val, &o->modes, ParseMode);
    } else if (flag == "--counts") {
      ok = ParseList(flag, val, &o->counts, [](const std::string& s, size_t* v) {
        long long x;
        if (!ParseNumber(s, &x)) return false;
        *v = static_cast<size_t>(x);
        return true;
      });
    } else if (flag == "--roots") {
      if (val == "all") {
        o->roots = std::vector<int>{-1};  // -1: every rank
      } else {
        std::vector<int> r;
        ok = ParseList(flag, val, &r, [](const std::string& s, int* v) {
          long long x;
          if (!ParseNumber(s, &x)) return false;
          *v = static_cast<int>(x);
          return true;
        });
        o->roots = r;
      }
    } else if (flag == "--inplace") {
      if (val == "both")
        o->placements = {false, true};
      else if (val == "yes")
        o->placements = {true};
      else if (val == "no")
        o->placements = {false};
      else
        ok = false;
    } else if (flag == "--split") {
      if (val == "yes")
        o->run_split = true;
      else if (val == "no")
        o->run_split = false;
      else if (val == "only")
        o->run_matrix = false, o->run_split = true;
      else
        ok = false;
    } else if (flag == "--max-print") {
      long long x;
      ok = ParseNumber(val, &x);
      o->max_print = static_cast<int>(x);
    } else if (flag == "--verbose") {
      o->verbose = true;
    } else if (flag == "--self-test") {
      o->self_test = true;
    } else if (flag == "--mem") {
      ok = ParseMemory(val, &o->memory);
    } else if (flag == "--expect-single-pass") {
      o->expect_single_pass = true;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "collectives_check: bad argument '%s' (see check_options.h)\n",
                   arg.c_str());
      return false;
    }
  }
  return true;
}

std::vector<int> RootsFor(const Options& o, int nranks) {
  std::vector<int> out;
  if (o.roots && !(o.roots->size() == 1 && o.roots->front() == -1)) {
    for (int r : *o.roots) {
      if (r < nranks) out.push_back(r);  // a root beyond this world is skipped
    }
    return out;
  }
  if (o.roots || nranks <= 5) {  // "all", or the default for small worlds
    for (int r = 0; r < nranks; ++r) out.push_back(r);
    return out;
  }
  // Larger worlds: the first, a middle and the last rank cover the distinct tree shapes
  // without multiplying run time by N.
  std::set<int> s = {0, nranks / 2, nranks - 1};
  return {s.begin(), s.end()};
}

}  // namespace check
