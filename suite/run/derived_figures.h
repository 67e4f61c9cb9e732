#pragma once
// The figures of a run that follow from its curves and a few facts about it: the last
// evaluation, the train loss of the last steps, step time, throughput and model FLOP
// utilisation after warm-up, where a step's time goes, what the gradient exchange costs.
// A pure function without LibTorch, so that how a figure is derived is tested on numbers
// chosen for it (tests/unit/run/derived_figures_test.cpp, also in the torch-free test program).
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lrb {

using Curves = std::map<std::string, std::vector<double>>;
using Figures = std::map<std::string, double>;

// The per-step curves of a step's phases, in the order of StepPhases (step_phases.h) less
// the exchange (recorded as allreduce_seconds); each has a figure <name>_median.
inline constexpr const char* kStepPhaseCurves[] = {"step_data_seconds", "step_forward_seconds", "step_backward_seconds",
                                                   "step_optimizer_seconds", "step_other_seconds"};

// [train] target as the curves read it: the evaluation curve and the value to reach.
struct TargetFacts {
  std::string curve;  // "eval_accuracy", "eval_loss"
  double value = 0;
  bool higher_is_better = true;  // the figure's direction: reached at >= value, else at <=
};

struct RunFacts {
  bool finished = false;                  // the run ended ok: its last evaluation counts
  std::vector<std::string> task_metrics;  // the task's metrics, each evaluated as eval_<name>
  double batch_size = 0;                  // samples per step (the global batch of a group)
  double tokens_per_sample = 0;
  double flops_per_sample = 0;  // the model's own forward count; NaN: not counted
  double peak_flops_per_s = 0;  // one device's measured peak; 0: unknown
  int devices = 1;              // the members of a data-parallel group
  double steps_done = 0;        // optimizer steps taken
  std::optional<TargetFacts> target;
};

// Steps not counted in the step-time figures: the first ones pay for allocation and caches.
std::size_t warm_up_steps(std::size_t steps);

// FLOPs of one training step: forward plus backward, the backward counted as twice the
// forward (the usual convention: gradients with respect to activations and to weights).
double training_step_flops(double forward_flops_per_sample, double batch);
// The achieved rate over the measured peak of the devices that trained (data parallel:
// every member's); NaN where either is unknown.
double flop_utilisation(double achieved_flops_per_s, double peak_flops_per_s, int devices);

// eval_loss and eval_<metric> (finished runs), train_loss (the mean of the last 10 steps),
// train_flops (the model FLOPs of the steps taken), step_seconds_median and _p95,
// samples_per_s, tokens_per_s, model_flops_per_s, flop_utilisation, each phase's median,
// allreduce_seconds_median and allreduce_share; with a target, the first evaluation that
// reached it: target_step, target_flops and target_seconds (the training steps' time up to
// it), and target_reached = 1 — or, a finished run that never reached it, target_reached = 0
// and no cost at all.
// A figure whose curve is missing or empty is left out; flops_per_sample is not among them
// (the caller's fact, recorded as it is).
Figures figures_from_curves(const Curves& curves, const RunFacts& facts);

}  // namespace lrb
