#include "suite/contracts/metrics.h"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

#include "suite/core/errors.h"

namespace lrb {
namespace {

void check_single_label(const at::Tensor& logits, const at::Tensor& targets) {
  LRB_CHECK(logits.dim() == 2, "metric: logits must be [n, classes]");
  LRB_CHECK(targets.dim() == 1 && targets.size(0) == logits.size(0), "metric: targets must be [n] class ids");
}

void check_multilabel(const at::Tensor& logits, const at::Tensor& targets) {
  LRB_CHECK(logits.dim() == 2, "metric: logits must be [n, classes]");
  LRB_CHECK(targets.sizes() == logits.sizes(), "metric: multi-label targets must be [n, classes] like the logits");
}

double accuracy(const at::Tensor& logits, const at::Tensor& targets) {
  check_single_label(logits, targets);
  if (targets.numel() == 0) return 0.0;
  return logits.argmax(1).eq(targets).to(at::kDouble).mean().item<double>();
}

// Mean over classes of per-class F1; classes absent from both targets and predictions
// are left out of the mean (as scikit-learn does with labels = present classes).
double macro_f1(const at::Tensor& logits, const at::Tensor& targets) {
  check_single_label(logits, targets);
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

// Fraction of samples whose label is among the K highest logits.
template <int K>
double top_k_accuracy(const at::Tensor& logits, const at::Tensor& targets) {
  check_single_label(logits, targets);
  if (targets.numel() == 0) return 0.0;
  const auto k = std::min<std::int64_t>(K, logits.size(1));
  const auto top = std::get<1>(logits.topk(k, 1));
  return top.eq(targets.unsqueeze(1)).any(1).to(at::kDouble).mean().item<double>();
}

// Example-based F1 (EBF): mean over samples of 2|y ∩ ŷ| / (|y| + |ŷ|). A sample with no
// true and no predicted label scores 1: the prediction is exactly right.
double example_f1(const at::Tensor& logits, const at::Tensor& targets) {
  check_multilabel(logits, targets);
  if (logits.size(0) == 0) return 0.0;
  const auto pred = logits.gt(0).to(at::kDouble);
  const auto truth = targets.gt(0.5).to(at::kDouble);
  const auto inter = (pred * truth).sum(1);
  const auto denom = pred.sum(1) + truth.sum(1);
  const auto f = at::where(denom.eq(0), at::ones_like(denom), 2 * inter / denom.clamp_min(1));
  return f.mean().item<double>();
}

// Micro-F1 (MiF): F1 over all (sample, label) decisions, 2TP / (2TP + FP + FN). With no
// true and no predicted label anywhere it is 1, matching the EBF convention.
double micro_f1(const at::Tensor& logits, const at::Tensor& targets) {
  check_multilabel(logits, targets);
  const auto pred = logits.gt(0);
  const auto truth = targets.gt(0.5);
  const double tp = pred.logical_and(truth).sum().item<double>();
  const double denom = pred.sum().item<double>() + truth.sum().item<double>();
  return denom == 0 ? 1.0 : 2 * tp / denom;
}

}  // namespace

const std::vector<MetricDef>& metric_table() {
  static const std::vector<MetricDef> table = {
      {"accuracy", "fraction of samples whose arg-max class is the label", false, &accuracy},
      {"macro_f1", "mean over classes of per-class F1", false, &macro_f1},
      {"top3", "fraction of samples whose label is among the 3 highest logits", false, &top_k_accuracy<3>, 3},
      {"top5", "fraction of samples whose label is among the 5 highest logits", false, &top_k_accuracy<5>, 5},
      {"top10", "fraction of samples whose label is among the 10 highest logits", false, &top_k_accuracy<10>, 10},
      {"ebf", "multi-label example-based F1: mean over samples of 2|y∩ŷ|/(|y|+|ŷ|), ŷ = sigmoid(logit) > 0.5",
       true, &example_f1},
      {"micro_f1", "multi-label micro-F1 over all label decisions, ŷ = sigmoid(logit) > 0.5", true, &micro_f1},
  };
  return table;
}

const MetricDef* find_metric(const std::string& name) {
  for (const auto& m : metric_table())
    if (m.name == name) return &m;
  return nullptr;
}

double majority_class_share(const at::Tensor& targets) {
  if (targets.dim() != 1 || targets.numel() == 0) throw std::invalid_argument("majority_class_share: needs [n] class ids, n > 0");
  const auto counts = targets.to(at::kLong).bincount();
  return counts.max().item<double>() / static_cast<double>(targets.numel());
}

std::string non_finite_logits_problem(const at::Tensor& logits) {
  const at::Tensor bad = logits.isfinite().logical_not();
  const std::int64_t count = bad.sum().item<std::int64_t>();
  if (count == 0) return "";
  const at::Tensor first = bad.nonzero()[0];
  std::string at_index;
  for (std::int64_t i = 0; i < first.size(0); ++i)
    at_index += (i == 0 ? "" : ", ") + std::to_string(first[i].item<std::int64_t>());
  return std::to_string(count) + " of " + std::to_string(logits.numel()) + " logits are NaN or infinite (the first at [" +
         at_index + "])";
}

double compute_metric(const std::string& name, const at::Tensor& logits, const at::Tensor& targets) {
  const MetricDef* m = find_metric(name);
  if (!m) throw std::invalid_argument("unknown metric '" + name + "'");
  return m->fn(logits, targets);
}

}  // namespace lrb
