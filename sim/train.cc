// The data-parallel step model (see train.h).
#include "sim/train.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/collective.h"
#include "sim/data_dir.h"

namespace weft::sim {

double ModelSpec::FlopsPerSample() const {
  // Kaplan et al. 2020, Table 1, per token: 2N + 2 n_layer n_ctx d_model forward, and
  // the backward is twice the forward.
  const double per_token = 6.0 * params + 6.0 * layers * seq_len * static_cast<double>(hidden);
  return per_token * seq_len;
}

const ModelSpec* ModelCatalog::Find(const std::string& name) const {
  for (const ModelSpec& m : models) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

Result<ModelCatalog> LoadShippedModels() {
  WEFT_ASSIGN_OR_RETURN(const std::string path, ShippedDataPath("catalog/models.json"));
  return LoadModels(path);
}

Result<ModelCatalog> LoadModels(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument(fmt::format("cannot open model catalog {}", path));
  std::stringstream text;
  text << in.rdbuf();
  const auto root = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object() || !root.contains("sources") ||
      !root["sources"].is_object() || !root.contains("models") || !root["models"].is_array()) {
    return InvalidArgument(fmt::format("{}: needs 'sources' and 'models'", path));
  }
  ModelCatalog cat;
  for (auto it = root["sources"].begin(); it != root["sources"].end(); ++it) {
    cat.sources[it.key()] = {it->value("title", ""), it->value("url", ""), it->value("date", ""),
                             it->value("accessed", "")};
  }
  for (const auto& j : root["models"]) {
    ModelSpec m;
    m.name = j.value("name", "");
    const auto num = [&](const char* k) {
      return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0;
    };
    m.params = num("params");
    m.layers = static_cast<int>(num("layers"));
    m.hidden = static_cast<int>(num("hidden"));
    m.seq_len = static_cast<int>(num("seq_len"));
    m.micro_batch = static_cast<int>(num("micro_batch"));
    if (m.name.empty() || !(m.params > 0) || m.layers <= 0 || m.hidden <= 0 || m.seq_len <= 0 ||
        m.micro_batch <= 0) {
      return InvalidArgument(
          fmt::format("{}: model '{}' needs a name and positive params, "
                      "layers, hidden, seq_len, micro_batch",
                      path, m.name));
    }
    if (!j.contains("sources") || !j["sources"].is_array() || j["sources"].empty()) {
      return InvalidArgument(fmt::format("{}: model '{}' has no sources", path, m.name));
    }
    for (const auto& s : j["sources"]) {
      if (!s.is_string() || cat.sources.count(s.get<std::string>()) == 0) {
        return InvalidArgument(
            fmt::format("{}: model '{}': undefined source {}", path, m.name, s.dump()));
      }
      m.sources.push_back(s.get<std::string>());
    }
    cat.models.push_back(std::move(m));
  }
  return cat;
}

Efficiency EfficiencyFor(const Instance& inst, const TrainConfig& cfg) {
  if (cfg.efficiency) return {*cfg.efficiency, "override"};
  auto it = inst.figures.find("efficiency");
  if (it != inst.figures.end() && it->second.value) {
    return {*it->second.value, fmt::format("catalog ({})", it->second.status)};
  }
  return {kDefaultEfficiency, "default (no catalog figure)"};
}

std::optional<double> EfficiencyOverride::For(const std::string& instance) const {
  auto it = per_instance.find(instance);
  if (it != per_instance.end()) return it->second;
  return all;
}

Result<EfficiencyOverride> ParseEfficiencyOverride(const std::string& text) {
  EfficiencyOverride out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = eq == std::string::npos ? "" : item.substr(0, eq);
    const std::string number = eq == std::string::npos ? item : item.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || !(v > 0 && v <= 1) ||
        (eq != std::string::npos && name.empty())) {
      return InvalidArgument(
          fmt::format("efficiency '{}': expected a number in (0, 1] or INSTANCE=NUMBER", item));
    }
    if (name.empty()) {
      out.all = v;
    } else {
      out.per_instance[name] = v;
    }
  }
  return out;
}

Overlap OverlapBuckets(double backward_s, const std::vector<double>& bucket_s) {
  Overlap o;
  const size_t n = bucket_s.size();
  double free_at = 0;  // when the communication stream is next idle
  for (size_t j = 0; j < n; ++j) {
    const double ready = backward_s * static_cast<double>(j + 1) / static_cast<double>(n);
    free_at = std::max(free_at, ready) + bucket_s[j];
    o.comm_total += bucket_s[j];
  }
  o.comm_end = free_at;
  o.exposed = std::max(0.0, free_at - backward_s);
  return o;
}

namespace {

// The all-reduce time of a bucket of `bytes`, rounded up to whole elements per rank so
// that the ring's chunks are equal and the symmetry shortcut applies (the rounding is at
// most ranks * elem bytes, negligible against MiB buckets).
Result<std::pair<double, std::string>> BucketTime(const ClusterSpec& c, double bytes, int elem,
                                                  const std::string& algo) {
  const size_t p = static_cast<size_t>(c.ranks());
  size_t count = static_cast<size_t>(std::ceil(bytes / elem));
  count = (count + p - 1) / p * p;
  CollectiveQuery q;
  q.coll = sched::Collective::kAllReduce;
  q.bytes = count * static_cast<size_t>(elem);
  q.dtype = elem == 2 ? DataType::kBfloat16 : DataType::kFloat32;
  q.algo = algo;
  WEFT_ASSIGN_OR_RETURN(Prediction pred, PredictCollective(c, q));
  return std::make_pair(pred.seconds, pred.algorithm);
}

}  // namespace

Result<ParallelLayout> LayoutFor(const ClusterSpec& c, int tp, int pp) {
  const int g = c.accels_per_host, world = c.ranks();
  if (tp < 1 || pp < 1) return InvalidArgument("train: tp and pp must be >= 1");
  if (g % tp != 0) {
    return InvalidArgument(fmt::format(
        "train: tp {} must divide the {} accelerators of a host (tensor groups stay on the "
        "intra-node links)",
        tp, g));
  }
  if (world % (tp * pp) != 0) {
    return InvalidArgument(
        fmt::format("train: {} ranks are not a multiple of tp x pp = {}", world, tp * pp));
  }
  ParallelLayout l;
  l.tp = tp;
  l.pp = pp;
  l.dp = world / (tp * pp);
  l.stage_ranks = l.dp * tp;
  if (l.stage_ranks % g != 0 && g % l.stage_ranks != 0) {
    return InvalidArgument(
        fmt::format("train: a stage of {} ranks neither fills whole hosts of {} nor divides one",
                    l.stage_ranks, g));
  }
  l.tp_group = c;
  l.tp_group.hosts = 1;
  l.tp_group.accels_per_host = tp;
  l.tp_group.oversubscription = 1;  // one host: no leaves
  l.dp_group = c;
  if (l.stage_ranks >= g) {
    // A stage fills stage_ranks / g hosts; each holds g / tp ranks of a DP group, and the
    // tp groups' rings run at once, sharing the NICs: 1/tp of each NIC per group.
    l.dp_group.accels_per_host = g / tp;
    l.dp_group.hosts = l.stage_ranks / g;
    l.dp_group.nic_bytes_per_s = c.nic_bytes_per_s / tp;
  } else {
    l.dp_group.accels_per_host = l.dp;  // the whole DP group inside one host
    l.dp_group.hosts = 1;
  }
  WEFT_RETURN_IF_ERROR(Validate(l.dp_group));
  // Stage s + 1 starts stage_ranks after stage s: some boundary crosses hosts as soon as
  // the pipeline spans more than one host.
  l.p2p_crosses_hosts = pp > 1 && static_cast<long long>(pp) * l.stage_ranks > g;
  return l;
}

Result<StepPrediction> PredictStep(const ClusterSpec& c, const Instance& inst,
                                   const ModelSpec& model, const TrainConfig& cfg) {
  const Efficiency eff = EfficiencyFor(inst, cfg);
  if (!(eff.value > 0 && eff.value <= 1) || !(cfg.bucket_bytes > 0) ||
      (cfg.grad_bytes != 2 && cfg.grad_bytes != 4) || cfg.grad_accum < 1) {
    return InvalidArgument(
        "train: efficiency in (0,1], bucket > 0, grad bytes 2 or 4, "
        "accumulation >= 1");
  }
  const double peak = inst.Get("tflops_dense_bf16") * 1e12;
  if (!(peak > 0)) return InvalidArgument(fmt::format("{}: no TFLOPS figure", inst.name));
  WEFT_ASSIGN_OR_RETURN(ParallelLayout l, LayoutFor(c, cfg.tp, cfg.pp));
  if (model.layers % l.pp != 0) {
    return InvalidArgument(
        fmt::format("train: {} layers do not split into {} equal stages", model.layers, l.pp));
  }
  StepPrediction s;
  s.nodes = c.hosts;
  s.ranks = c.ranks();
  s.tp = l.tp;
  s.pp = l.pp;
  s.dp = l.dp;
  const int m = cfg.grad_accum;
  s.samples_per_step = static_cast<double>(l.dp) * model.micro_batch * m;
  s.efficiency = eff;
  const double shards = static_cast<double>(l.tp) * l.pp;
  const double micro = model.micro_batch * model.FlopsPerSample() / (peak * eff.value) / shards;
  s.compute_s = micro * m;

  // Activations at a layer or stage boundary: micro_batch x seq x hidden in bf16.
  const double act_bytes =
      static_cast<double>(model.micro_batch) * model.seq_len * model.hidden * 2;
  const double layer_allreduces = 2.0 * model.layers / l.pp;  // per pass, per stage
  if (l.tp > 1) {
    WEFT_ASSIGN_OR_RETURN(auto t, BucketTime(l.tp_group, act_bytes, 2, cfg.algo));
    s.tp_allreduce_s = t.first;
    s.tp_algorithm = t.second;
  }
  const double fwd = micro / 3 + layer_allreduces * s.tp_allreduce_s;
  const double bwd = micro * 2 / 3 + layer_allreduces * s.tp_allreduce_s;
  if (l.pp > 1) {
    const double bytes = act_bytes / l.tp;
    s.p2p_s = l.p2p_crosses_hosts ? c.inter_alpha_s + bytes * c.accels_per_host /
                                                          (c.nic_bytes_per_s * c.nics_per_host)
                                  : c.intra_alpha_s + bytes / c.intra_bytes_per_s;
  }
  const double slot = fwd + bwd + 2 * s.p2p_s;
  const double pipeline = (m + l.pp - 1) * slot;
  s.bubble_s = (l.pp - 1) * slot;
  s.bubble_fraction = static_cast<double>(l.pp - 1) / (m + l.pp - 1);
  s.tp_comm_s = (m + l.pp - 1) * 2 * layer_allreduces * s.tp_allreduce_s;

  std::vector<double> buckets;
  if (l.dp > 1) {
    const double grad = model.params / shards * cfg.grad_bytes;
    const int full = static_cast<int>(grad / cfg.bucket_bytes);
    const double rest = grad - full * cfg.bucket_bytes;
    if (full > 0) {
      WEFT_ASSIGN_OR_RETURN(auto full_t,
                            BucketTime(l.dp_group, cfg.bucket_bytes, cfg.grad_bytes, cfg.algo));
      s.algorithm = full_t.second;
      buckets.assign(static_cast<size_t>(full), full_t.first);
    }
    if (rest > 0) {
      WEFT_ASSIGN_OR_RETURN(auto rest_t, BucketTime(l.dp_group, rest, cfg.grad_bytes, cfg.algo));
      buckets.push_back(rest_t.first);
      if (full == 0) s.algorithm = rest_t.second;
    }
  }
  s.overlap = OverlapBuckets(bwd, buckets);
  s.step_s = pipeline + s.overlap.exposed;
  s.samples_per_s = s.samples_per_step / s.step_s;
  // Mixed-precision Adam keeps 16 bytes per parameter (ZeRO paper, Rajbhandari et al.
  // 2020: fp16 weights and gradients, fp32 master weights, momentum and variance), of
  // the rank's 1/(tp pp) shard; activations come on top, so this is a lower bound.
  s.fits_memory = 16.0 * model.params / shards <= inst.Get("hbm_gb") * 1e9;
  for (const auto& [option, price] : PriceOptions(inst)) {
    if (!price) continue;  // no published figure for this purchase option
    const double per_step = *price * c.hosts * s.step_s / 3600;
    s.usd_per_step[option] = per_step;
    s.usd_per_million_samples[option] = per_step / s.samples_per_step * 1e6;
  }
  return s;
}

}  // namespace weft::sim
