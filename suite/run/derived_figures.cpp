#include "suite/run/derived_figures.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "suite/contracts/figure_key.h"
#include "suite/stats/sample_stats.h"

namespace lrb {

namespace {

const std::vector<double>* curve(const Curves& curves, const std::string& name) {
  const auto it = curves.find(name);
  return it == curves.end() || it->second.empty() ? nullptr : &it->second;
}

std::vector<double> after(const std::vector<double>& v, std::size_t warm) {
  return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(warm), v.end());
}

void add_evaluation(const Curves& curves, const RunFacts& facts, Figures& m) {
  auto last = [&](const std::string& name) {
    const std::vector<double>* v = curve(curves, name);
    return v ? v->back() : std::nan("");
  };
  if (facts.finished && curves.count("eval_loss")) {
    m["eval_loss"] = last("eval_loss");
    for (const auto& name : facts.task_metrics) {
      const std::string stored = FigureKey::task_metric(name).stored();
      m[stored] = last(stored);
    }
  }
  if (const std::vector<double>* v = curve(curves, "train_loss")) {
    const std::size_t k = std::min<std::size_t>(10, v->size());
    double sum = 0;
    for (std::size_t i = v->size() - k; i < v->size(); ++i) sum += (*v)[i];
    m["train_loss"] = sum / static_cast<double>(k);
  }
}

// Where the step goes: each phase's median over the same steps; and with data parallelism
// what the gradient exchange costs, alone and as a share of a step.
void add_step_parts(const Curves& curves, const std::vector<double>& steady, std::size_t warm, std::size_t steps, Figures& m) {
  for (const char* name : kStepPhaseCurves)
    if (const std::vector<double>* phase = curve(curves, name); phase && phase->size() == steps)
      m[std::string(name) + "_median"] = stats::quantile(after(*phase, warm), 0.5);
  if (const std::vector<double>* ar = curve(curves, "allreduce_seconds"); ar && ar->size() == steps) {
    const std::vector<double> exchange = after(*ar, warm);
    m["allreduce_seconds_median"] = stats::quantile(exchange, 0.5);
    std::vector<double> share(exchange.size());
    for (std::size_t i = 0; i < share.size(); ++i) share[i] = exchange[i] / steady[i];
    m["allreduce_share"] = stats::quantile(share, 0.5);
  }
}

// The first evaluation that reached the target, and what it cost to get there.
void add_target(const Curves& curves, const RunFacts& facts, Figures& m) {
  const std::vector<double>* steps = curve(curves, "eval_step");
  const std::vector<double>* values = curve(curves, facts.target->curve);
  const TargetFacts& t = *facts.target;
  if (steps && values && steps->size() == values->size())
    for (std::size_t i = 0; i < values->size(); ++i) {
      const double v = (*values)[i];
      if (!(t.higher_is_better ? v >= t.value : v <= t.value)) continue;
      const double step = (*steps)[i];
      m["target_reached"] = 1;
      m["target_step"] = step;
      m["target_flops"] = training_step_flops(facts.flops_per_sample, facts.batch_size) * step;
      double seconds = 0;
      if (const std::vector<double>* times = curve(curves, "step_seconds"))
        for (std::size_t k = 0; k < times->size() && static_cast<double>(k) < step; ++k) seconds += (*times)[k];
      m["target_seconds"] = seconds;
      return;
    }
  // Never reached: a fact only once the run has ended; a cost is never given then.
  if (facts.finished) m["target_reached"] = 0;
}

}  // namespace

std::size_t warm_up_steps(std::size_t steps) { return std::min<std::size_t>(5, steps / 2); }

double training_step_flops(double forward_flops_per_sample, double batch) { return 3.0 * forward_flops_per_sample * batch; }

double flop_utilisation(double achieved_flops_per_s, double peak_flops_per_s, int devices) {
  if (!(std::isfinite(achieved_flops_per_s) && std::isfinite(peak_flops_per_s) && peak_flops_per_s > 0 && devices > 0))
    return std::nan("");
  return achieved_flops_per_s / (peak_flops_per_s * devices);
}

Figures figures_from_curves(const Curves& curves, const RunFacts& facts) {
  Figures m;
  add_evaluation(curves, facts, m);
  if (facts.target) add_target(curves, facts, m);
  // The model FLOPs training spent (a FLOP budget's measure): NaN where the model's are not counted.
  if (facts.steps_done > 0) m["train_flops"] = training_step_flops(facts.flops_per_sample, facts.batch_size) * facts.steps_done;
  const std::vector<double>* steps = curve(curves, "step_seconds");
  if (!steps) return m;
  const std::size_t warm = warm_up_steps(steps->size());
  const std::vector<double> steady = after(*steps, warm);
  const double median = stats::quantile(steady, 0.5);
  m["step_seconds_median"] = median;
  m["step_seconds_p95"] = stats::quantile(steady, 0.95);
  m["samples_per_s"] = facts.batch_size / median;
  m["tokens_per_s"] = facts.batch_size * facts.tokens_per_sample / median;
  // Model FLOP utilisation: the model's own count of a step's FLOPs over the step time, and
  // that over the measured peak of the devices that trained it.
  if (const double achieved = training_step_flops(facts.flops_per_sample, facts.batch_size) / median; std::isfinite(achieved)) {
    m["model_flops_per_s"] = achieved;
    if (const double utilisation = flop_utilisation(achieved, facts.peak_flops_per_s, facts.devices); std::isfinite(utilisation))
      m["flop_utilisation"] = utilisation;
  }
  add_step_parts(curves, steady, warm, steps->size(), m);
  return m;
}

}  // namespace lrb
