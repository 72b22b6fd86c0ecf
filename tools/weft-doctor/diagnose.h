// The diagnosis behind weft-doctor: from every rank's flight-recorder dump (the JSON
// written by src/comm/flight_recorder.cc), one verdict per communicator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::doctor {

struct Op {
  uint64_t seq = 0;
  std::string op, dtype, algo, state, status;  // state: running, done, failed
  uint64_t bytes = 0;
  int round = -1, waiting_for = -1;
  int64_t start_ns = 0, end_ns = 0;
};

struct Dump {
  std::string comm, host, reason, file;
  int rank = 0, size = 0, pid = 0;
  int64_t time_ns = 0;
  std::vector<Op> ops;  // oldest first
};

// Parses one dump; an error message (naming what is wrong) on bad input.
std::optional<Dump> ParseDump(const std::string& text, std::string* error);

struct Verdict {
  std::string comm;
  int size = 0;
  std::vector<int> missing;      // ranks with no dump
  std::vector<int> behind;       // ranks whose last collective is before the others'
  std::vector<std::string> ranks;  // one line per rank: where it is
  std::string summary;           // the one-line verdict
};

std::vector<Verdict> Diagnose(const std::vector<Dump>& dumps);
nlohmann::json ToJson(const std::vector<Verdict>& verdicts);

}  // namespace weft::doctor
