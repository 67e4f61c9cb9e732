#pragma once
// The Model contract: a torch::nn::Module that maps a batch of inputs (token ids [B, N],
// signal [B, N, C] or grid [B, C, H, W]) to logits [B, classes]. Parameter count comes
// from the module; the analytic FLOP count from the registry entry.
#include <torch/nn/module.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "suite/contracts/task_info.h"

namespace lrb {

class Model : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;
  // What the model decided and a report may show (per-block attention kind, random block
  // tables...). Called after training; stored with the run.
  virtual nlohmann::json records() const { return nlohmann::json::object(); }
  // Where the model came from, when that is more than its options say (a TorchScript file:
  // its path, digest and how each seed was initialised): the run's provenance "model".
  virtual nlohmann::json provenance() const { return nlohmann::json::object(); }
  // Figures the model measures about itself while it trains (MAELRE: the peak memory of its
  // attention calls), by stored metric name. A measurement run ([measure]) calls
  // reset_figures() before its timed steps and stores figures() after them, beside the
  // runner's own figures; each name is declared in the figure catalogue (suite/contracts/figures.h).
  virtual void reset_figures() {}
  virtual std::map<std::string, double> figures() const { return {}; }
  // How the trained weights are run at evaluation: settings from the registry entry's
  // `inference` schema, resolved (sret: token merging on or off, its rate, schedule and
  // unmerge mode). An empty object restores the setting the model trained with. The runner's
  // evaluation variants (suite/run/variant_eval.h) switch between settings on one set of
  // weights; a model without an inference schema only ever gets {}.
  virtual void set_inference(const nlohmann::json& settings) {
    if (!settings.empty()) throw std::logic_error("this model has no inference settings");
  }
  // Activations the next forward passes keep while probing is on, by name, each [B, N, C]
  // (sret: the input of every pooling layer), for the distribution-shift figures of the
  // evaluation variants. Off by default: they hold memory.
  virtual void set_probing(bool /*on*/) {}
  virtual std::vector<std::pair<std::string, at::Tensor>> probes() const { return {}; }
};

// A registry entry's parameter count (ModelEntry::params) from its factory: the model built
// once on the CPU and its parameters counted. Exact by construction, where a closed form would
// have to follow every layer the model has.
inline std::function<double(const nlohmann::json&, const TaskInfo&)> params_by_building(
    std::function<std::shared_ptr<Model>(const nlohmann::json&, const TaskInfo&)> make) {
  return [make = std::move(make)](const nlohmann::json& options, const TaskInfo& task) {
    const std::shared_ptr<Model> model = make(options, task);
    double n = 0;
    for (const auto& p : model->parameters()) n += static_cast<double>(p.numel());
    return n;
  };
}

}  // namespace lrb
