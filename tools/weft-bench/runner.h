// Measures one (collective, dtype, redop, size): out of place, then in place, each
// timed (barrier, then n iterations; the max over ranks of the per-iteration average)
// and, in check mode, run once more on fresh inputs and verified.
#pragma once

#include <weft/weft.h>

#include <cstddef>

#include "collectives.h"
#include "options.h"
#include "report.h"

namespace weftbench {

struct World {
  weftComm_t comm;
  int rank;
  int nranks;
};

// Host buffers for the largest size of one (collective, dtype): allocated once,
// page-faulted before any timing.
class Buffers {
 public:
  // shared: allocated with weftMemAlloc and registered with w.comm (--mem shared).
  Buffers(const World& w, bool shared, const Collective& c, size_t max_count, size_t typesize);
  ~Buffers();
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void* send() const { return send_; }
  void* recv() const { return recv_; }
  void* in_place() const { return in_place_; }

 private:
  void* send_ = nullptr;
  void* recv_ = nullptr;
  void* in_place_ = nullptr;
  weftComm_t comm_ = nullptr;     // set when shared
  void* handles_[3] = {};         // registrations of send_, recv_, in_place_
};

Row MeasureSize(const World& w, const Options& o, const Collective& c, weftDataType_t dtype,
                weftRedOp_t redop, size_t bytes, Buffers& buffers);

}  // namespace weftbench
