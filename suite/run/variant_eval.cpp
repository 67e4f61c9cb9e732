#include "suite/run/variant_eval.h"

#include <ATen/ATen.h>
#include <torch/types.h>

#include <algorithm>
#include <chrono>
#include <map>

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

}  // namespace

void evaluate_variants(Model& model, const VariantEvalInput& in, RunRecord& record) {
  const json& variants = in.evaluate.at("variants");
  const bool probes = in.evaluate.value("probes", true);
  const std::size_t V = variants.size();
  auto name_of = [&](std::size_t v) { return variants[v].at("name").get<std::string>(); };
  auto use = [&](std::size_t v) { model.set_inference(variants[v].at("settings")); };
  auto prefix = [&](std::size_t v) { return "variant." + name_of(v) + "."; };
  model.eval();
  at::NoGradGuard no_grad;

  // One pass over the evaluation split: the model as trained (for the probes), then each variant.
  std::vector<std::vector<at::Tensor>> logits(V);
  std::map<std::string, ChannelStats> reference;
  std::vector<std::map<std::string, ProbeAcc>> probed(V);
  std::vector<std::string> probe_names;
  const std::int64_t n = in.eval.size();
  model.set_probing(probes);
  for (std::int64_t start = 0; start < n; start += in.batch_size) {
    in.check_stop();
    const at::Tensor x = in.eval.x.narrow(0, start, std::min(in.batch_size, n - start)).to(in.device);
    std::vector<std::pair<std::string, at::Tensor>> ref;
    if (probes) {
      model.set_inference(json::object());
      model.forward(x);
      ref = model.probes();
      for (const auto& [name, t] : ref) {
        if (start == 0) probe_names.push_back(name);
        reference[name].add(t);
      }
    }
    for (std::size_t v = 0; v < V; ++v) {
      use(v);
      logits[v].push_back(model.forward(x).to(at::kCPU));
      if (!probes) continue;
      const auto got = model.probes();
      LRB_CHECK(got.size() == ref.size(), "a model's probe points do not depend on its inference setting");
      for (std::size_t p = 0; p < got.size(); ++p) {
        LRB_CHECK(got[p].first == ref[p].first && got[p].second.sizes() == ref[p].second.sizes(),
                  "probes of every inference setting have the shape of the model's as trained");
        ProbeAcc& acc = probed[v][got[p].first];
        acc.stats.add(got[p].second);
        const at::Tensor cos = at::cosine_similarity(got[p].second.to(at::kDouble), ref[p].second.to(at::kDouble), -1, 1e-12);
        acc.cosine_sum += cos.sum().item<double>();
        acc.tokens += static_cast<double>(cos.numel());
      }
    }
  }
  model.set_probing(false);

  auto& m = record.metrics;
  auto& c = record.curves;
  for (std::size_t v = 0; v < V; ++v) {
    const at::Tensor all = at::cat(logits[v]);
    m[prefix(v) + "eval_loss"] = loss_of(all, in.eval.y, in.task.multilabel).item<double>();
    for (const auto& name : in.task.metrics) m[prefix(v) + "eval_" + name] = compute_metric(name, all, in.eval.y);
    for (const auto& probe : probe_names) {
      const ChannelStats& r = reference.at(probe);
      const ProbeAcc& a = probed[v].at(probe);
      const at::Tensor mr = r.mean(), vr = r.var(), mv = a.stats.mean(), vv = a.stats.var();
      const std::string p = prefix(v) + "probe_" + probe;
      m[p + "_cosine"] = a.cosine_sum / a.tokens;
      // Shifts in units of the as-trained spread, averaged over channels (dead channels, of
      // zero variance, cannot blow them up).
      const double spread = std::sqrt(vr.mean().item<double>());
      m[p + "_mean_shift"] = spread > 0 ? (mv - mr).abs().mean().item<double>() / spread : 0.0;
      m[p + "_var_ratio"] = vr.mean().item<double>() > 0 ? vv.mean().item<double>() / vr.mean().item<double>() : 1.0;
      c[p + "_channel_mean"] = to_vector(mv);
      c[p + "_channel_var"] = to_vector(vv);
    }
  }
  for (const auto& probe : probe_names) {
    c["probe_" + probe + "_channel_mean"] = to_vector(reference.at(probe).mean());
    c["probe_" + probe + "_channel_var"] = to_vector(reference.at(probe).var());
  }

  // Inference cost at each batch size; the variants take turns within every repeat.
  const auto repeats = in.evaluate.at("repeats").get<std::int64_t>();
  const auto warmup = in.evaluate.at("warmup").get<std::int64_t>();
  for (const auto& b : in.evaluate.at("batch_sizes")) {
    const auto batch = b.get<std::int64_t>();
    const at::Tensor idx = at::arange(batch, at::kLong).remainder(n);
    const at::Tensor x = in.eval.x.index_select(0, idx).to(in.device);
    const std::string tag = "_b" + std::to_string(batch);
    for (std::size_t v = 0; v < V; ++v) {
      use(v);
      for (std::int64_t w = 0; w < warmup; ++w) model.forward(x).to(at::kCPU);
    }
    std::vector<std::vector<double>> seconds(V);
    std::vector<std::int64_t> peak(V, 0);
    for (std::int64_t rep = 0; rep < repeats; ++rep) {
      for (std::size_t v = 0; v < V; ++v) {
        in.check_stop();
        use(v);
        reset_device_peak(in.device);
        PeakScope scope;
        const auto t0 = std::chrono::steady_clock::now();
        model.forward(x).to(at::kCPU);  // on an accelerator, the copy waits for the forward
        seconds[v].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        const std::int64_t device_peak = device_peak_bytes(in.device);
        peak[v] = std::max(peak[v], device_peak >= 0 ? device_peak : scope.peak_above_base());
      }
    }
    for (std::size_t v = 0; v < V; ++v) {
      const double med = median(seconds[v]);
      m[prefix(v) + "infer_seconds" + tag] = med;
      m[prefix(v) + "infer_samples_per_s" + tag] = static_cast<double>(batch) / med;
      m[prefix(v) + "infer_peak_bytes" + tag] = static_cast<double>(peak[v]);
      c[prefix(v) + "infer_seconds" + tag] = seconds[v];
    }
  }

  json recs = json::object();
  for (std::size_t v = 0; v < V; ++v) {
    use(v);
    recs[name_of(v)] = {{"settings", variants[v].at("settings")}, {"model", model.records()}};
  }
  record.records["variants"] = recs;
  record.records["probes"] = probe_names;  // in the model's order (metric names sort them)
  model.set_inference(json::object());
}

}  // namespace lrb
