// A reference model of NCCL's allreduce (ring, tree and, where NVLink SHARP exists, NVLS
// tree), each with the LL / LL128 / Simple protocols, in the form of NCCL's own tuning
// model: time = latency(algorithm, protocol, hops) + bytes / bandwidth(algorithm,
// protocol), NCCL taking the fastest. It runs on the ClusterSpec the event simulator
// uses (hosts, accelerators per host, NIC and intra-node bandwidths from the catalog),
// with one set of figures per instance type (NcclFigures) fitted to published
// nccl-tests results (sim/calibration/, docs/SIMULATOR.md "Held against published NCCL
// runs").
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sim/cluster.h"

namespace weft::sim {

// The calibrated figures of one instance type. Latencies are those of the Simple
// protocol; LL and LL128 scale them by NCCL's own ratios (nccl_model.cc).
struct NcclFigures {
  double base_us = 10;        // per call: launch, proxy start (NCCL's baseLat)
  double net_hop_us = 15;     // per inter-node step of the algorithm
  double nvlink_hop_us = 3;   // per intra-node step
  double nic_fraction = 0.9;  // of the host's NIC bandwidth that NCCL achieves
  double nvlink_fraction = 0.8;  // of an accelerator's NVLink bandwidth per direction
  bool nvls = false;  // NVLink SHARP (H100 NVSwitch): NCCL's NVLS tree is available
};

enum class NcclAlgo { kRing, kTree, kNvlsTree };
enum class NcclProto { kLL, kLL128, kSimple };
const char* NcclAlgoName(NcclAlgo a);
const char* NcclProtoName(NcclProto p);

struct NcclPrediction {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  double time_s = 0;
  double busbw_gbps = 0;  // nccl-tests' busbw: bytes / time x 2(n-1)/n, GB/s
};

// The time of one (algorithm, protocol) pair for an allreduce of `bytes`.
double NcclAllreduceTime(const ClusterSpec& c, const NcclFigures& f, NcclAlgo a, NcclProto p,
                         double bytes);
// NCCL's choice: the fastest pair.
NcclPrediction PredictNcclAllreduce(const ClusterSpec& c, const NcclFigures& f, double bytes);

// One published nccl-tests result (a row of sim/calibration/published.csv).
struct PublishedRow {
  std::string source_id, source, instance, collective, nccl, efa, role, note;
  int nodes = 0, gpus = 0;
  double bytes = 0, busbw_gbps = 0;
};
Result<std::vector<PublishedRow>> LoadPublished(const std::string& path);

// A sample of the fit: the cluster it ran on, its size and its published busbw.
struct NcclSample {
  ClusterSpec cluster;
  double bytes = 0, busbw_gbps = 0;
};
// The figures minimising sum(log(predicted / published)^2) over `samples` (relative
// errors, so that 1 MiB and 8 GiB weigh the same), by Nelder-Mead from a fixed start
// within fixed bounds: deterministic, so that a rerun gives the checked-in figures.
NcclFigures FitNcclFigures(const std::vector<NcclSample>& samples, bool nvls);

}  // namespace weft::sim
