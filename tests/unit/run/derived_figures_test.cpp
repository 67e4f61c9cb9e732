// A run's derived figures from its curves (suite/run/derived_figures.h), on numbers chosen
// so that each figure's definition shows: warm-up steps left out, numpy's linear quantile,
// the last evaluation, the mean of the last ten train losses, FLOP utilisation over every
// member's peak, the exchange's share of each step. No LibTorch: also in the torch-free tests.
#include "suite/run/derived_figures.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lrb {
namespace {

RunFacts facts() {
  RunFacts f;
  f.finished = true;
  f.task_metrics = {"accuracy"};
  f.batch_size = 8;
  f.tokens_per_sample = 100;
  f.flops_per_sample = 1e9;
  f.peak_flops_per_s = 1e10;
  f.devices = 2;
  return f;
}

TEST(DerivedFigures, StepTimeThroughputAndUtilisationAfterWarmUp) {
  // 8 steps: the first 4 (min(5, 8 / 2)) are warm-up, whatever they took.
  const Curves c = {{"step_seconds", {100, 100, 100, 100, 3, 4, 5, 6}}};
  const Figures m = figures_from_curves(c, facts());
  EXPECT_DOUBLE_EQ(m.at("step_seconds_median"), 4.5);
  EXPECT_DOUBLE_EQ(m.at("step_seconds_p95"), 5.85);  // numpy: 5 + 0.85 * (6 - 5)
  EXPECT_DOUBLE_EQ(m.at("samples_per_s"), 8 / 4.5);
  EXPECT_DOUBLE_EQ(m.at("tokens_per_s"), 800 / 4.5);
  const double achieved = 3 * 1e9 * 8 / 4.5;  // forward + backward (2x forward) per step
  EXPECT_DOUBLE_EQ(m.at("model_flops_per_s"), achieved);
  EXPECT_DOUBLE_EQ(m.at("flop_utilisation"), achieved / (1e10 * 2));  // over both members' peaks
  EXPECT_EQ(warm_up_steps(100), 5u);
  EXPECT_EQ(warm_up_steps(3), 1u);
}

TEST(DerivedFigures, PhasesAndTheExchangeShareAreMediansOverTheSameSteps) {
  const Curves c = {{"step_seconds", {9, 9, 9, 9, 3, 4, 5, 6}},
                    {"step_forward_seconds", {7, 7, 7, 7, 1, 2, 2, 3}},
                    {"step_backward_seconds", {1, 2, 3}},  // not one per step: left out
                    {"allreduce_seconds", {0, 0, 0, 0, 1, 1, 1, 3}}};
  const Figures m = figures_from_curves(c, facts());
  EXPECT_DOUBLE_EQ(m.at("step_forward_seconds_median"), 2);
  EXPECT_EQ(m.count("step_backward_seconds_median"), 0u);
  EXPECT_EQ(m.count("step_data_seconds_median"), 0u);
  EXPECT_DOUBLE_EQ(m.at("allreduce_seconds_median"), 1);
  // Each step's share (1/3, 1/4, 1/5, 3/6), then the median: not the ratio of medians (1/4.5).
  EXPECT_DOUBLE_EQ(m.at("allreduce_share"), (1.0 / 4 + 1.0 / 3) / 2);
}

TEST(DerivedFigures, TheLastEvaluationOfAFinishedRunAndTheLastTenTrainLosses) {
  Curves c = {{"eval_loss", {2.0, 1.5}}, {"eval_accuracy", {0.3, 0.6}}, {"train_loss", {}}};
  for (int i = 1; i <= 12; ++i) c["train_loss"].push_back(i);
  Figures m = figures_from_curves(c, facts());
  EXPECT_DOUBLE_EQ(m.at("eval_loss"), 1.5);
  EXPECT_DOUBLE_EQ(m.at("eval_accuracy"), 0.6);
  EXPECT_DOUBLE_EQ(m.at("train_loss"), 7.5);  // the mean of 3..12
  EXPECT_EQ(m.count("step_seconds_median"), 0u) << "no steps timed: no step figures";
  RunFacts stopped = facts();
  stopped.finished = false;
  m = figures_from_curves(c, stopped);
  EXPECT_EQ(m.count("eval_loss"), 0u) << "a run that did not finish has no final evaluation";
  EXPECT_EQ(m.count("eval_accuracy"), 0u);
  EXPECT_DOUBLE_EQ(m.at("train_loss"), 7.5);
  c.erase("eval_accuracy");  // a metric never evaluated is NaN, not absent: the report says so
  EXPECT_TRUE(std::isnan(figures_from_curves(c, facts()).at("eval_accuracy")));
}

TEST(DerivedFigures, AModelWithoutAFlopCountOrAnUnmeasuredPeakGivesNoUtilisation) {
  const Curves c = {{"step_seconds", {1, 1}}};
  RunFacts f = facts();
  f.flops_per_sample = std::nan("");
  Figures m = figures_from_curves(c, f);
  EXPECT_EQ(m.count("model_flops_per_s"), 0u);
  EXPECT_EQ(m.count("flop_utilisation"), 0u);
  f = facts();
  f.peak_flops_per_s = 0;
  m = figures_from_curves(c, f);
  EXPECT_DOUBLE_EQ(m.at("model_flops_per_s"), 3 * 1e9 * 8);
  EXPECT_EQ(m.count("flop_utilisation"), 0u);
}

TEST(DerivedFigures, TrainFlopsCountTheStepsTaken) {
  RunFacts f = facts();
  f.steps_done = 10;
  EXPECT_DOUBLE_EQ(figures_from_curves({}, f).at("train_flops"), 3 * 1e9 * 8 * 10);
  f.flops_per_sample = std::nan("");
  EXPECT_TRUE(std::isnan(figures_from_curves({}, f).at("train_flops"))) << "not counted, never 0";
  f.steps_done = 0;
  EXPECT_EQ(figures_from_curves({}, f).count("train_flops"), 0u) << "a run that took no step spent nothing on training";
}

TEST(DerivedFigures, TheFirstEvaluationAtTheTargetGivesItsStepFlopsAndSeconds) {
  RunFacts f = facts();
  f.steps_done = 40;
  f.target = TargetFacts{"eval_accuracy", 0.7, true};
  Curves c = {{"eval_step", {10, 20, 30, 40}}, {"eval_accuracy", {0.5, 0.7, 0.65, 0.9}}, {"step_seconds", {}}};
  for (int i = 0; i < 40; ++i) c["step_seconds"].push_back(i < 20 ? 0.5 : 2.0);
  Figures m = figures_from_curves(c, f);
  EXPECT_DOUBLE_EQ(m.at("target_reached"), 1);
  EXPECT_DOUBLE_EQ(m.at("target_step"), 20) << "the first evaluation at or above the value, not the last";
  EXPECT_DOUBLE_EQ(m.at("target_flops"), 3 * 1e9 * 8 * 20);
  EXPECT_DOUBLE_EQ(m.at("target_seconds"), 20 * 0.5) << "the training steps' time before it, not after";
  // A loss is reached from above.
  f.target = TargetFacts{"eval_loss", 1.0, false};
  c["eval_loss"] = {2.0, 1.2, 1.0, 0.8};
  m = figures_from_curves(c, f);
  EXPECT_DOUBLE_EQ(m.at("target_step"), 30);
  // Never reached: recorded as such, with no cost at all.
  f.target = TargetFacts{"eval_accuracy", 0.95, true};
  m = figures_from_curves(c, f);
  EXPECT_DOUBLE_EQ(m.at("target_reached"), 0);
  for (const char* cost : {"target_step", "target_flops", "target_seconds"}) EXPECT_EQ(m.count(cost), 0u) << cost;
  // A run that did not finish has not yet failed to reach it.
  f.finished = false;
  EXPECT_EQ(figures_from_curves(c, f).count("target_reached"), 0u);
}

}  // namespace
}  // namespace lrb
