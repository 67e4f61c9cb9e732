#pragma once
// Task metrics by name ("accuracy", "macro_f1", ...). A task names its metrics in
// TaskInfo::metrics (the first is the primary one); the runner evaluates each by name.
// Adding a metric is one function and one registration line in metrics.cpp's table.
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
};

const std::vector<MetricDef>& metric_table();
const MetricDef* find_metric(const std::string& name);
double compute_metric(const std::string& name, const at::Tensor& logits, const at::Tensor& targets);

}  // namespace lrb
