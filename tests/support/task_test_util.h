#pragma once
// Helpers for task tests: build a registered task with some options changed, generate
// small splits, hash their bytes, and score simple reference classifiers.
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "suite/registry/registry.h"
#include "suite/contracts/task.h"

namespace lrb::testing {

// Defaults, then `overrides`, then the schema's resolve hook (as the sweep expansion does).
inline json task_options(const std::string& name, const json& overrides, std::int64_t seq_len) {
  const TaskEntry* e = TaskRegistry::instance().find(name);
  if (!e) throw std::runtime_error("no task " + name);
  json o = json::object();
  for (const auto& spec : e->schema.options) o[spec.name] = spec.default_value;
  for (const auto& [k, v] : overrides.items()) {
    if (!e->schema.find(k)) throw std::runtime_error("task " + name + " has no option " + k);
    o[k] = v;
  }
  if (e->schema.resolve) e->schema.resolve(o, json{{"seq_len", seq_len}});
  return o;
}

inline TaskInfo describe_task(const std::string& name, const json& overrides, std::int64_t seq_len) {
  return TaskRegistry::instance().find(name)->describe(task_options(name, overrides, seq_len), seq_len);
}

inline TaskData generate_task(const std::string& name, const json& overrides, std::int64_t seq_len,
                              std::uint64_t seed, std::int64_t eval_size) {
  const TaskEntry* e = TaskRegistry::instance().find(name);
  auto task = e->make(task_options(name, overrides, seq_len), seq_len);
  DataRequest r;
  r.seed = seed;
  r.eval_size = eval_size;
  return task->generate(r);
}

inline std::string tensor_bytes(const at::Tensor& t) {
  const auto c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
}

// Nearest class centroid (Euclidean) fitted on train features, accuracy on eval features.
inline double nearest_centroid_accuracy(const at::Tensor& ftrain, const at::Tensor& ytrain, const at::Tensor& feval,
                                        const at::Tensor& yeval, std::int64_t classes) {
  auto centroids = at::zeros({classes, ftrain.size(1)}, at::kDouble);
  const auto ft = ftrain.to(at::kDouble), fe = feval.to(at::kDouble);
  for (std::int64_t c = 0; c < classes; ++c) {
    const auto m = ytrain.eq(c);
    if (m.sum().item<std::int64_t>() > 0) centroids[c] = ft.index({m}).mean(0);
  }
  const auto d = at::cdist(fe, centroids);
  return d.argmin(1).eq(yeval).to(at::kDouble).mean().item<double>();
}

// The best constant predictor: the most frequent training class, scored on eval.
inline double constant_accuracy(const at::Tensor& ytrain, const at::Tensor& yeval, std::int64_t classes) {
  const auto counts = at::bincount(ytrain, {}, classes);
  const auto c = counts.argmax().item<std::int64_t>();
  return yeval.eq(c).to(at::kDouble).mean().item<double>();
}

}  // namespace lrb::testing
