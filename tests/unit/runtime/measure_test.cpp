// [measure]: measurement runs (peak memory and step time at a batch size, and the largest
// batch within a memory budget) instead of training runs.
#include <gtest/gtest.h>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/run/runner.h"
#include "suite/runtime/counting_allocator.h"

#include <ATen/ATen.h>

#include <map>

namespace lrb {
namespace {

const char* kSweep = R"(
[sweep]
name = "m"
seeds = 1
[train]
batch_size = 2
[[task]]
name = "listops"
seq_len = 64
train_size = 8
[[model]]
name = "transformer"
dim = 32
depth = 1
heads = 2
)";

// The sweep's first run, executed without publishing a run file.
RunOutcome run_first(const std::string& sweep, const std::string& file = "m.toml") {
  const ExpandedSweep ex = expand_sweep(parse_sweep(sweep, file));
  RunContext ctx;
  ctx.publish = false;
  return execute_run(ex.runs[0], ctx);
}

TEST(Measure, SectionIsValidatedAndKeysTrainingRunsApart) {
  const ExpandedSweep train = expand_sweep(parse_sweep(kSweep, "m.toml"));
  const ExpandedSweep measure =
      expand_sweep(parse_sweep(std::string(kSweep) + "[measure]\nbudget = \"8MiB\"\n", "m.toml"));
  EXPECT_FALSE(train.runs[0].spec.contains("measure"));
  ASSERT_TRUE(measure.runs[0].spec.contains("measure"));
  EXPECT_EQ(measure.runs[0].spec["measure"]["budget"], 8 << 20);
  EXPECT_EQ(measure.runs[0].spec["measure"]["steps"], 3);
  EXPECT_NE(train.runs[0].key, measure.runs[0].key);
  try {
    parse_sweep(std::string(kSweep) + "[measure]\nbudgte = 1\n", "m.toml");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("m.toml:17:1: unknown key 'budgte' in [measure]; did you mean 'budget'?"),
              std::string::npos)
        << e.what();
  }
}

TEST(Measure, FindsTheLargestBatchThatFitsTheBudget) {
  CpuMemoryCounter::install();
  const RunOutcome out = run_first(std::string(kSweep) + "[measure]\nbudget = \"12MiB\"\nmax_batch = 4096\nsteps = 2\n");
  ASSERT_EQ(out.status, RunStatus::Ok) << out.error;
  const auto& m = out.record.metrics;
  const auto& c = out.record.curves;
  ASSERT_TRUE(m.count("max_batch_in_budget"));
  const double best = m.at("max_batch_in_budget");
  EXPECT_GT(best, 2);
  EXPECT_LT(best, 4096);
  EXPECT_EQ(m.at("memory_budget_bytes"), 12 << 20);
  // The search probed the answer (fits) and the next batch (refused).
  bool fit = false, next_refused = false;
  for (std::size_t i = 0; i < c.at("probe_batch").size(); ++i) {
    if (c.at("probe_batch")[i] == best && c.at("probe_fits")[i] == 1) fit = true;
    if (c.at("probe_batch")[i] == best + 1 && c.at("probe_fits")[i] == 0) next_refused = true;
  }
  EXPECT_TRUE(fit);
  EXPECT_TRUE(next_refused);
  // Figures at [train] batch_size are not those of the probes.
  EXPECT_EQ(c.at("step_seconds").size(), 2u);
  EXPECT_GT(m.at("peak_bytes"), 0);
  EXPECT_LT(m.at("peak_bytes"), 12 << 20);
  EXPECT_FALSE(m.count("eval_accuracy"));
}

TEST(Measure, PeakGrowsWithTheBatch) {
  CpuMemoryCounter::install();
  auto peak_at = [](int batch) {
    std::string s = kSweep;
    s.replace(s.find("batch_size = 2"), 14, "batch_size = " + std::to_string(batch));
    return run_first(s + "[measure]\nsteps = 1\n").record.metrics.at("peak_step_bytes");
  };
  EXPECT_GT(peak_at(8), 2.5 * peak_at(2) - 1e6);
}

}  // namespace
}  // namespace lrb

namespace lrb {
namespace {

// A training run's step memory is that of the steps that find the gradients and AdamW's
// moments resident (activations and temporaries), on LibTorch 1.13 and 2.x alike: the first
// step allocates all three (3 x the parameters' bytes), later steps none of them. A model
// with many parameters and little activation memory shows the difference.
TEST(Measure, StepMemoryLeavesOutWhatTheFirstStepMakesResident) {
  CpuMemoryCounter::install();
  const std::string sweep = "[sweep]\nname = \"s\"\nseeds = 1\n[train]\nbatch_size = 1\nsteps = 4\neval_every = 0\n"
                            "eval_size = 2\n[[task]]\nname = \"listops\"\nseq_len = 64\ntrain_size = 8\n"
                            "[[model]]\nname = \"transformer\"\ndim = 256\ndepth = 2\nheads = 4\n";
  const RunOutcome out = run_first(sweep, "s.toml");
  ASSERT_EQ(out.status, RunStatus::Ok) << out.error;
  const double param_bytes = 4 * out.record.metrics.at("params");
  const std::vector<double>& steps = out.record.curves.at("step_peak_bytes");
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_GE(steps[0], 3 * param_bytes);  // gradients and both moments, made by the first step
  for (std::size_t i = 1; i < steps.size(); ++i) {
    EXPECT_LT(steps[i], param_bytes) << "step " << i << " allocated its gradients again";
    EXPECT_EQ(steps[i], steps[1]);
  }
  EXPECT_EQ(out.record.metrics.at("peak_step_bytes"), steps[1]);
  EXPECT_GE(out.record.metrics.at("peak_bytes"), steps[0]);  // the first step's allocations stay in the run's peak
}

TEST(Measure, PeakScopesNestWithoutLosingTheEnclosingPeak) {
  CpuMemoryCounter::install();
  CpuMemoryCounter::begin_scope();
  PeakScope outer;
  { at::Tensor big = at::zeros({1 << 20});  // 4 MiB, freed at once
  }
  std::int64_t inner_peak = 0;
  {
    PeakScope inner;
    at::Tensor small = at::zeros({1 << 10});
    inner_peak = inner.peak_above_base();
  }
  EXPECT_GE(inner_peak, 4 << 10);
  EXPECT_LT(inner_peak, 1 << 20);                  // the inner window saw only its own block
  EXPECT_GE(outer.peak_above_base(), 4 << 20);     // the outer window kept the big one
}

// MAELRE reports the peak of its attention calls in a measurement run: with the switch on
// kernel attention at block 1 (N_b > D_b), the figure grows linearly in N (the reviewers'
// O(N·D), not min(N, D)²); the run's step memory contains it.
TEST(Measure, MaelreReportsItsAttentionMemory) {
  CpuMemoryCounter::install();
  std::map<std::int64_t, double> attention, step;
  for (std::int64_t n : {512, 1024, 2048}) {
    const std::string sweep = "[sweep]\nname = \"a\"\nseeds = 1\n[train]\nbatch_size = 1\n[measure]\nsteps = 1\n"
                              "[[task]]\nname = \"retrieval\"\ntrain_size = 4\nseq_len = " + std::to_string(n) +
                              "\n[[model]]\nname = \"maelre\"\ndim = 32\n";
    const RunOutcome out = run_first(sweep, "a.toml");
    ASSERT_EQ(out.status, RunStatus::Ok) << out.error;
    ASSERT_TRUE(out.record.metrics.count("attention_peak_bytes"));
    attention[n] = out.record.metrics.at("attention_peak_bytes");
    step[n] = out.record.metrics.at("peak_step_bytes");
    EXPECT_LT(attention[n], step[n]);
  }
  EXPECT_NEAR(attention[1024] / attention[512], 2.0, 0.15);
  EXPECT_NEAR(attention[2048] / attention[1024], 2.0, 0.15);
}

}  // namespace
}  // namespace lrb
