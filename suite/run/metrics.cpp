#include "suite/run/metrics.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace lrb {
namespace {

double accuracy(const at::Tensor& logits, const at::Tensor& targets) {
  if (targets.numel() == 0) return 0.0;
  return logits.argmax(1).eq(targets).to(at::kDouble).mean().item<double>();
}

// Mean over classes of per-class F1; classes absent from both targets and predictions
// are left out of the mean (as scikit-learn does with labels = present classes).
double macro_f1(const at::Tensor& logits, const at::Tensor& targets) {
  const auto classes = logits.size(1);
  const auto pred = logits.argmax(1);
  double sum = 0;
  std::int64_t counted = 0;
  for (std::int64_t c = 0; c < classes; ++c) {
    const auto p = pred.eq(c), t = targets.eq(c);
    const double tp = p.logical_and(t).sum().item<double>();
    const double np = p.sum().item<double>(), nt = t.sum().item<double>();
    if (np + nt == 0) continue;
    sum += 2 * tp / (np + nt);
    ++counted;
  }
  return counted ? sum / static_cast<double>(counted) : 0.0;
}

}  // namespace

const std::vector<MetricDef>& metric_table() {
  static const std::vector<MetricDef> table = {
      {"accuracy", "fraction of samples whose arg-max class is the label", false, &accuracy},
      {"macro_f1", "mean over classes of per-class F1", false, &macro_f1},
  };
  return table;
}

const MetricDef* find_metric(const std::string& name) {
  for (const auto& m : metric_table())
    if (m.name == name) return &m;
  return nullptr;
}

double compute_metric(const std::string& name, const at::Tensor& logits, const at::Tensor& targets) {
  const MetricDef* m = find_metric(name);
  if (!m) throw std::invalid_argument("unknown metric '" + name + "'");
  return m->fn(logits, targets);
}

}  // namespace lrb
