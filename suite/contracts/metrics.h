#pragma once
// Task metrics by name ("accuracy", "macro_f1", "ebf", "micro_f1", "top5", ...). A task
// names its metrics in TaskInfo::metrics (the first is the primary one); the runner
// evaluates each by name. Adding a metric is one function and one line in metrics.cpp's
// table.
//
// Multi-label prediction rule: label k is predicted for a sample when sigmoid(logit) > 0.5,
// that is logit > 0 (a logit of exactly 0 is a "no").
//
// A sweep chooses metrics per task through the task option `metrics` (comma-separated
// names, the first becomes the primary): `metrics = "accuracy,top5"`. Tasks validate the
// names against this table when options are resolved, before any run starts.
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace lrb {

// logits [n, classes]; targets [n] int64 class ids, or [n, classes] 0/1 for multi-label.
using MetricFn = double (*)(const at::Tensor& logits, const at::Tensor& targets);

struct MetricDef {
  std::string name;
  std::string help;
  bool multilabel;  // true: targets are [n, classes] 0/1
  MetricFn fn;
  std::int64_t top_k = 0;  // k of a top-k metric (needs more than k classes); 0 otherwise
};

const std::vector<MetricDef>& metric_table();
const MetricDef* find_metric(const std::string& name);
double compute_metric(const std::string& name, const at::Tensor& logits, const at::Tensor& targets);

// Why `logits` cannot be scored: "3 of 640 logits are NaN or infinite (the first at [2, 5])",
// or "" when every one is finite. A metric of non-finite logits (argmax of NaNs picks a
// class) would be a number measured on nothing: the runner fails the run with this reason.
std::string non_finite_logits_problem(const at::Tensor& logits);

// The accuracy of always predicting the commonest class: that class's share of `targets`
// ([n] int64 class ids, n > 0). Reports show it beside accuracy as the chance level.
double majority_class_share(const at::Tensor& targets);

}  // namespace lrb
