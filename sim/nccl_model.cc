#include "sim/nccl_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

namespace weft::sim {
namespace {

// Protocol constants, from NCCL's tuning model (src/graph/tuning.cc, 2.12-2.18):
// the payload per line (LL: 4 data bytes in every 8-byte line, LL128: 120 of 128) and,
// relative to Simple, the per-call (baseLat) and per-hop (hwLat, NVLink and network
// rows) latencies. Only these ratios are taken from NCCL; the Simple latencies themselves
// are the calibrated NcclFigures, since NCCL's tables are its guesses, not measurements.
constexpr std::array<double, 3> kPayload = {0.5, 120.0 / 128.0, 1.0};
constexpr std::array<double, 3> kBaseRatio = {6.6 / 8.4, 14.0 / 8.4, 1.0};
constexpr std::array<double, 3> kRingNvlRatio = {0.6 / 3.4, 1.9 / 3.4, 1.0};
constexpr std::array<double, 3> kRingNetRatio = {2.7 / 14.0, 4.0 / 14.0, 1.0};
constexpr std::array<double, 3> kTreeNvlRatio = {0.6 / 4.0, 1.25 / 4.0, 1.0};
constexpr std::array<double, 3> kTreeNetRatio = {5.0 / 14.0, 8.5 / 14.0, 1.0};
// NCCL scales the tree's bandwidth by 0.92 against the ring's (the same file).
constexpr double kTreeCorrection = 0.92;

int CeilLog2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

}  // namespace

const char* NcclAlgoName(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kRing: return "ring";
    case NcclAlgo::kTree: return "tree";
    case NcclAlgo::kNvlsTree: return "nvls_tree";
  }
  return "?";
}

const char* NcclProtoName(NcclProto p) {
  switch (p) {
    case NcclProto::kLL: return "LL";
    case NcclProto::kLL128: return "LL128";
    case NcclProto::kSimple: return "Simple";
  }
  return "?";
}

// Bytes crossing each bottleneck, per byte of the buffer: a host's NICs (per direction)
// and one accelerator's NVLink port (per direction).
//   ring over n ranks: every rank sends 2(n-1)/n of the buffer to its successor, and
//     each host has one egress per channel, so both the host's NICs and each port carry
//     2(n-1)/n;
//   tree (NCCL's double binary tree between hosts, a chain inside each): a host sends
//     on average 2(H-1)/H of the buffer (half per tree, up and down), each accelerator
//     sends the buffer up the chain and down again (2);
//   NVLS tree: the same between hosts; inside, NVSwitch reduces and multicasts, so each
//     accelerator sends the buffer once (1).
double NcclAllreduceTime(const ClusterSpec& c, const NcclFigures& f, NcclAlgo a, NcclProto p,
                         double bytes) {
  const int hosts = c.hosts, g = c.accels_per_host, n = c.ranks();
  const int pi = static_cast<int>(p);
  const double net_bps = c.nic_bytes_per_s * c.nics_per_host * f.nic_fraction;
  const double nvl_bps = c.intra_bytes_per_s * f.nvlink_fraction;
  const double net = f.net_hop_us * 1e-6, nvl = f.nvlink_hop_us * 1e-6;
  double lat = f.base_us * 1e-6 * kBaseRatio[pi];
  double net_bytes = 0, nvl_bytes = 0, efficiency = kPayload[pi];
  if (a == NcclAlgo::kRing) {
    const int inter_steps = 2 * (hosts - 1), steps = 2 * (n - 1);
    lat += inter_steps * net * kRingNetRatio[pi] + (steps - inter_steps) * nvl * kRingNvlRatio[pi];
    net_bytes = hosts > 1 ? 2.0 * (n - 1) / n : 0;
    nvl_bytes = g > 1 ? 2.0 * (n - 1) / n : 0;
  } else {
    const int depth = CeilLog2(hosts);
    const bool nvls = a == NcclAlgo::kNvlsTree;
    const double nvl_hops = nvls ? 1 : g - 1;
    lat += 2 * (depth * net * kTreeNetRatio[pi] + nvl_hops * nvl * kTreeNvlRatio[pi]);
    net_bytes = hosts > 1 ? 2.0 * (hosts - 1) / hosts : 0;
    nvl_bytes = g > 1 ? (nvls ? 1.0 : 2.0) : 0;
    efficiency *= kTreeCorrection;
  }
  const double per_byte = std::max(net_bytes / net_bps, nvl_bytes / nvl_bps) / efficiency;
  return lat + bytes * per_byte;
}

NcclPrediction PredictNcclAllreduce(const ClusterSpec& c, const NcclFigures& f, double bytes) {
  NcclPrediction best;
  best.time_s = INFINITY;
  for (NcclAlgo a : {NcclAlgo::kRing, NcclAlgo::kTree, NcclAlgo::kNvlsTree}) {
    if (a == NcclAlgo::kNvlsTree && !f.nvls) continue;
    for (NcclProto p : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
      if (a == NcclAlgo::kNvlsTree && p != NcclProto::kSimple) continue;  // NCCL: Simple only
      const double t = NcclAllreduceTime(c, f, a, p, bytes);
      if (t < best.time_s) best = {a, p, t, 0};
    }
  }
  const int n = c.ranks();
  best.busbw_gbps = bytes / best.time_s * (n > 1 ? 2.0 * (n - 1) / n : 1) / 1e9;
  return best;
}

Result<std::vector<PublishedRow>> LoadPublished(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read " + path);
  std::vector<PublishedRow> rows;
  std::string line;
  bool header = true;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // the column names
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
    if (cells.size() == 11) cells.emplace_back();  // an empty note
    if (cells.size() != 12)
      return InvalidArgument(path + ":" + std::to_string(line_no) + ": 12 columns expected");
    PublishedRow r;
    r.source_id = cells[0], r.source = cells[1], r.instance = cells[2];
    r.collective = cells[5], r.nccl = cells[8], r.efa = cells[9], r.role = cells[10];
    r.note = cells[11];
    try {
      r.nodes = std::stoi(cells[3]), r.gpus = std::stoi(cells[4]);
      r.bytes = std::stod(cells[6]), r.busbw_gbps = std::stod(cells[7]);
    } catch (const std::exception&) {
      return InvalidArgument(path + ":" + std::to_string(line_no) + ": not a number");
    }
    if (r.role != "fit" && r.role != "holdout")
      return InvalidArgument(path + ":" + std::to_string(line_no) + ": role fit|holdout");
    rows.push_back(r);
  }
  return rows;
}

namespace {

constexpr int kParams = 5;
using Params = std::array<double, kParams>;
// Bounds of each figure: latencies in us, fractions of the nominal bandwidths.
constexpr Params kLo = {0, 0, 0, 0.05, 0.05};
constexpr Params kHi = {500, 500, 50, 1.0, 1.0};

// Unbounded coordinates -> figures (logistic), so Nelder-Mead never leaves the bounds.
NcclFigures ToFigures(const Params& x, bool nvls) {
  Params v;
  for (int i = 0; i < kParams; ++i) v[i] = kLo[i] + (kHi[i] - kLo[i]) / (1 + std::exp(-x[i]));
  NcclFigures f;
  f.base_us = v[0], f.net_hop_us = v[1], f.nvlink_hop_us = v[2];
  f.nic_fraction = v[3], f.nvlink_fraction = v[4], f.nvls = nvls;
  return f;
}

double Loss(const std::vector<NcclSample>& samples, const Params& x, bool nvls) {
  const NcclFigures f = ToFigures(x, nvls);
  double sum = 0;
  for (const NcclSample& s : samples) {
    const double e = std::log(PredictNcclAllreduce(s.cluster, f, s.bytes).busbw_gbps / s.busbw_gbps);
    sum += e * e;
  }
  return sum;
}

// Plain Nelder-Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5).
Params NelderMead(const std::vector<NcclSample>& samples, Params start, bool nvls, int iters) {
  std::array<Params, kParams + 1> pts;
  std::array<double, kParams + 1> val;
  for (int i = 0; i <= kParams; ++i) {
    pts[i] = start;
    if (i > 0) pts[i][i - 1] += 1.0;
    val[i] = Loss(samples, pts[i], nvls);
  }
  for (int it = 0; it < iters; ++it) {
    std::array<int, kParams + 1> order;
    for (int i = 0; i <= kParams; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return val[a] < val[b]; });
    const int worst = order[kParams], second = order[kParams - 1], best = order[0];
    Params centroid{};
    for (int i = 0; i < kParams; ++i)
      for (int d = 0; d < kParams; ++d) centroid[d] += pts[order[i]][d] / kParams;
    auto along = [&](double t) {
      Params p;
      for (int d = 0; d < kParams; ++d) p[d] = centroid[d] + t * (pts[worst][d] - centroid[d]);
      return p;
    };
    const Params refl = along(-1);
    const double fr = Loss(samples, refl, nvls);
    if (fr < val[best]) {
      const Params exp = along(-2);
      const double fe = Loss(samples, exp, nvls);
      pts[worst] = fe < fr ? exp : refl, val[worst] = std::min(fe, fr);
    } else if (fr < val[second]) {
      pts[worst] = refl, val[worst] = fr;
    } else {
      const Params con = along(0.5);
      const double fc = Loss(samples, con, nvls);
      if (fc < val[worst]) {
        pts[worst] = con, val[worst] = fc;
      } else {  // shrink towards the best
        for (int i = 0; i <= kParams; ++i) {
          if (i == best) continue;
          for (int d = 0; d < kParams; ++d) pts[i][d] = pts[best][d] + 0.5 * (pts[i][d] - pts[best][d]);
          val[i] = Loss(samples, pts[i], nvls);
        }
      }
    }
  }
  int best = 0;
  for (int i = 1; i <= kParams; ++i)
    if (val[i] < val[best]) best = i;
  return pts[best];
}

}  // namespace

NcclFigures FitNcclFigures(const std::vector<NcclSample>& samples, bool nvls) {
  Params x{};  // the middle of every bound
  // Restarts from the best point so far: Nelder-Mead's simplex can collapse early.
  for (int round = 0; round < 6; ++round) x = NelderMead(samples, x, nvls, 1500);
  return ToFigures(x, nvls);
}

}  // namespace weft::sim
