#include "suite/run/variant_eval.h"

#include <ATen/ATen.h>
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "suite/contracts/figure_key.h"
#include "suite/core/errors.h"
#include "suite/contracts/metrics.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/runtime/device_memory.h"

namespace lrb {
namespace {

using json = nlohmann::json;

// Per-channel sums over every sample and token of a probe, in float64.
struct ChannelStats {
  at::Tensor sum, sumsq;
  double count = 0;
  void add(const at::Tensor& x) {
    const at::Tensor d = x.to(at::kCPU, at::kDouble).reshape({-1, x.size(-1)});
    if (!sum.defined()) {
      sum = at::zeros({d.size(1)}, at::kDouble);
      sumsq = at::zeros({d.size(1)}, at::kDouble);
    }
    sum += d.sum(0);
    sumsq += (d * d).sum(0);
    count += static_cast<double>(d.size(0));
  }
  at::Tensor mean() const { return sum / count; }
  at::Tensor var() const { return (sumsq / count - mean() * mean()).clamp_min(0); }
};

struct ProbeAcc {
  ChannelStats stats;
  double cosine_sum = 0, tokens = 0;
};

std::vector<double> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

at::Tensor loss_of(const at::Tensor& logits, const at::Tensor& y, bool multilabel) {
  if (multilabel) return at::binary_cross_entropy_with_logits(logits, y.to(logits.scalar_type()));
  return at::cross_entropy_loss(logits, y);
}

// The [evaluate] variants of one run: names and settings (figure_key.h spells their figures).
struct Variants {
  const json& list;
  Model& model;
  std::size_t size() const { return list.size(); }
  std::string name(std::size_t v) const { return list[v].at("name").get<std::string>(); }
  void use(std::size_t v) const { model.set_inference(list[v].at("settings")); }
};

// One pass over the evaluation split: the model as trained (for the probes), then each variant.
struct EvalPass {
  std::vector<std::vector<at::Tensor>> logits;      // per variant, per batch
  std::map<std::string, ChannelStats> reference;    // per probe, the model as trained
  std::vector<std::map<std::string, ProbeAcc>> probed;  // per variant, per probe
  std::vector<std::string> probe_names;             // in the model's order
};

void probe_against(const std::vector<std::pair<std::string, at::Tensor>>& ref, const Model& model,
                   std::map<std::string, ProbeAcc>& probed) {
  const auto got = model.probes();
  LRB_CHECK(got.size() == ref.size(), "a model's probe points do not depend on its inference setting");
  for (std::size_t p = 0; p < got.size(); ++p) {
    LRB_CHECK(got[p].first == ref[p].first && got[p].second.sizes() == ref[p].second.sizes(),
              "probes of every inference setting have the shape of the model's as trained");
    ProbeAcc& acc = probed[got[p].first];
    acc.stats.add(got[p].second);
    const at::Tensor cos = at::cosine_similarity(got[p].second.to(at::kDouble), ref[p].second.to(at::kDouble), -1, 1e-12);
    acc.cosine_sum += cos.sum().item<double>();
    acc.tokens += static_cast<double>(cos.numel());
  }
}

EvalPass evaluation_pass(const Variants& variants, const VariantEvalInput& in, bool probes) {
  EvalPass pass;
  pass.logits.resize(variants.size());
  pass.probed.resize(variants.size());
  const std::int64_t n = in.eval.size();
  variants.model.set_probing(probes);
  for (std::int64_t start = 0; start < n; start += in.batch_size) {
    in.check_stop();
    const at::Tensor x = in.eval.x.narrow(0, start, std::min(in.batch_size, n - start)).to(in.device);
    std::vector<std::pair<std::string, at::Tensor>> ref;
    if (probes) {
      variants.model.set_inference(json::object());
      variants.model.forward(x);
      ref = variants.model.probes();
      for (const auto& [name, t] : ref) {
        if (start == 0) pass.probe_names.push_back(name);
        pass.reference[name].add(t);
      }
    }
    for (std::size_t v = 0; v < variants.size(); ++v) {
      variants.use(v);
      pass.logits[v].push_back(variants.model.forward(x).to(at::kCPU, at::kFloat));
      if (probes) probe_against(ref, variants.model, pass.probed[v]);
    }
  }
  variants.model.set_probing(false);
  return pass;
}

// Each variant's loss and task metrics, and its probes against the model as trained.
void record_quality(const Variants& variants, const EvalPass& pass, const VariantEvalInput& in, RunRecord& record) {
  auto& m = record.metrics;
  auto& c = record.curves;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const at::Tensor all = at::cat(pass.logits[v]);
    // As the run's own evaluation: a variant's NaN logits fail the run, never score.
    if (const std::string bad = non_finite_logits_problem(all); !bad.empty())
      throw std::runtime_error("non-finite evaluation output of variant " + variants.name(v) + ": " + bad);
    const double loss = loss_of(all, in.eval.y, in.task.multilabel).item<double>();
    if (!std::isfinite(loss))
      throw std::runtime_error("non-finite evaluation loss (" + std::to_string(loss) + ") of variant " + variants.name(v));
    m[FigureKey::task_metric("loss", variants.name(v)).stored()] = loss;
    for (const auto& name : in.task.metrics) m[FigureKey::task_metric(name, variants.name(v)).stored()] = compute_metric(name, all, in.eval.y);
    for (const auto& probe : pass.probe_names) {
      const ChannelStats& r = pass.reference.at(probe);
      const ProbeAcc& a = pass.probed[v].at(probe);
      const at::Tensor mr = r.mean(), vr = r.var(), mv = a.stats.mean(), vv = a.stats.var();
      const auto named = [&](const char* statistic) { return FigureKey::probe_statistic(probe, statistic, variants.name(v)).stored(); };
      m[named("cosine")] = a.cosine_sum / a.tokens;
      // Shifts in units of the as-trained spread, averaged over channels (dead channels, of
      // zero variance, cannot blow them up).
      const double spread = std::sqrt(vr.mean().item<double>());
      m[named("mean_shift")] = spread > 0 ? (mv - mr).abs().mean().item<double>() / spread : 0.0;
      m[named("var_ratio")] = vr.mean().item<double>() > 0 ? vv.mean().item<double>() / vr.mean().item<double>() : 1.0;
      c[named("channel_mean")] = to_vector(mv);
      c[named("channel_var")] = to_vector(vv);
    }
  }
  for (const auto& probe : pass.probe_names) {
    c[FigureKey::probe_statistic(probe, "channel_mean", "").stored()] = to_vector(pass.reference.at(probe).mean());
    c[FigureKey::probe_statistic(probe, "channel_var", "").stored()] = to_vector(pass.reference.at(probe).var());
  }
}

// Inference cost at one batch size; the variants take turns within every repeat.
void record_inference_cost(const Variants& variants, const VariantEvalInput& in, std::int64_t batch, RunRecord& record) {
  const auto repeats = in.evaluate.at("repeats").get<std::int64_t>();
  const auto warmup = in.evaluate.at("warmup").get<std::int64_t>();
  const at::Tensor idx = at::arange(batch, at::kLong).remainder(in.eval.size());
  const at::Tensor x = in.eval.x.index_select(0, idx).to(in.device);
  for (std::size_t v = 0; v < variants.size(); ++v) {
    variants.use(v);
    for (std::int64_t w = 0; w < warmup; ++w) variants.model.forward(x).to(at::kCPU);
  }
  std::vector<std::vector<double>> seconds(variants.size());
  std::vector<std::int64_t> peak(variants.size(), 0);
  for (std::int64_t rep = 0; rep < repeats; ++rep) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      in.check_stop();
      variants.use(v);
      reset_device_peak(in.device);
      PeakScope scope;
      const auto t0 = std::chrono::steady_clock::now();
      variants.model.forward(x).to(at::kCPU);  // on an accelerator, the copy waits for the forward
      seconds[v].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      const std::int64_t device_peak = device_peak_bytes(in.device);
      peak[v] = std::max(peak[v], device_peak >= 0 ? device_peak : scope.peak_above_base());
    }
  }
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const double med = median(seconds[v]);
    const auto named = [&](const char* what) { return FigureKey::inference(what, batch, variants.name(v)).stored(); };
    record.metrics[named("seconds")] = med;
    record.metrics[named("samples_per_s")] = static_cast<double>(batch) / med;
    record.metrics[named("peak_bytes")] = static_cast<double>(peak[v]);
    record.curves[named("seconds")] = seconds[v];
  }
}

}  // namespace

void evaluate_variants(Model& model, const VariantEvalInput& in, RunRecord& record) {
  const Variants variants{in.evaluate.at("variants"), model};
  model.eval();
  at::NoGradGuard no_grad;
  const EvalPass pass = evaluation_pass(variants, in, in.evaluate.value("probes", true));
  record_quality(variants, pass, in, record);
  for (const auto& b : in.evaluate.at("batch_sizes")) record_inference_cost(variants, in, b.get<std::int64_t>(), record);

  json recs = json::object();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    variants.use(v);
    recs[variants.name(v)] = {{"settings", variants.list[v].at("settings")}, {"model", model.records()}};
  }
  record.records["variants"] = recs;
  record.records["probes"] = pass.probe_names;  // in the model's order (metric names sort them)
  model.set_inference(json::object());
}

}  // namespace lrb
