// Output: the nccl-tests table on stdout and, optionally, a JSON record. Rank 0 only
// calls these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace weftbench {

struct ModeResult {
  bool ran = false;      // false: this mode does not exist for the collective (N/A)
  double time_us = 0;    // max over ranks of the per-iteration average
  double algbw = 0;      // GB/s
  double busbw = 0;      // GB/s
  int64_t wrong = -1;    // summed over ranks; -1: not checked
  std::string algorithm;  // what the planner ran for the timed calls (rank 0's)
};

struct Row {
  std::string op;
  size_t bytes;
  size_t count;
  std::string type;
  std::string redop;  // "none" for data movement
  int root;           // -1 when not rooted
  ModeResult out_of_place;
  ModeResult in_place;
};

// One rank's resident memory in KiB (rss.h): after init, at the end, and the peak.
struct RankRss {
  int64_t init_kib = 0;
  int64_t end_kib = 0;
  int64_t peak_kib = 0;
};

void PrintPreamble(const Options& o, int nranks);
void PrintHeader(const std::string& op);
void PrintRow(const Row& r);
void PrintFooter(int64_t wrong_total, bool checked, double avg_busbw,
                 const std::vector<RankRss>& rss);

// Returns false (after printing why) if the file cannot be written.
bool WriteJson(const std::string& path, const Options& o, int nranks,
               const std::vector<Row>& rows, int64_t wrong_total, double avg_busbw,
               const std::vector<RankRss>& rss);

}  // namespace weftbench
