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

std::string DefaultModelsPath() { return std::string(WEFT_SIM_CATALOG_DIR) + "/models.json"; }

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
Result<std::pair<double, std::string>> BucketTime(const ClusterSpec& c, double bytes, int elem) {
  const size_t p = static_cast<size_t>(c.ranks());
  size_t count = static_cast<size_t>(std::ceil(bytes / elem));
  count = (count + p - 1) / p * p;
  CollectiveQuery q;
  q.coll = sched::Collective::kAllReduce;
  q.bytes = count * static_cast<size_t>(elem);
  q.dtype = elem == 2 ? DataType::kBfloat16 : DataType::kFloat32;
  WEFT_ASSIGN_OR_RETURN(Prediction pred, PredictCollective(c, q));
  return std::make_pair(pred.seconds, pred.algorithm);
}

}  // namespace

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
  StepPrediction s;
  s.nodes = c.hosts;
  s.ranks = c.ranks();
  s.samples_per_step = static_cast<double>(s.ranks) * model.micro_batch * cfg.grad_accum;
  s.efficiency = eff;
  const double micro = model.micro_batch * model.FlopsPerSample() / (peak * eff.value);
  const double fwd = micro / 3, bwd = micro * 2 / 3;
  s.compute_s = micro * cfg.grad_accum;

  std::vector<double> buckets;
  if (s.ranks > 1) {
    const double grad = model.params * cfg.grad_bytes;
    const int full = static_cast<int>(grad / cfg.bucket_bytes);
    const double rest = grad - full * cfg.bucket_bytes;
    WEFT_ASSIGN_OR_RETURN(auto full_t, BucketTime(c, cfg.bucket_bytes, cfg.grad_bytes));
    s.algorithm = full_t.second;
    buckets.assign(static_cast<size_t>(full), full_t.first);
    if (rest > 0) {
      WEFT_ASSIGN_OR_RETURN(auto rest_t, BucketTime(c, rest, cfg.grad_bytes));
      buckets.push_back(rest_t.first);
      if (full == 0) s.algorithm = rest_t.second;
    }
  }
  s.overlap = OverlapBuckets(bwd, buckets);
  s.step_s = (cfg.grad_accum - 1) * micro + fwd + std::max(bwd, s.overlap.comm_end);
  s.samples_per_s = s.samples_per_step / s.step_s;
  // Mixed-precision Adam keeps 16 bytes per parameter (ZeRO paper, Rajbhandari et al.
  // 2020: fp16 weights and gradients, fp32 master weights, momentum and variance);
  // activations come on top, so this is a lower bound on what must fit.
  s.fits_memory = 16.0 * model.params <= inst.Get("hbm_gb") * 1e9;
  for (const auto& [option, price] : PriceOptions(inst)) {
    if (!price) continue;  // no published figure for this purchase option
    const double per_step = *price * c.hosts * s.step_s / 3600;
    s.usd_per_step[option] = per_step;
    s.usd_per_million_samples[option] = per_step / s.samples_per_step * 1e6;
  }
  return s;
}

}  // namespace weft::sim
