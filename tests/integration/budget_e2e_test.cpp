// End to end: a run's length from a FLOP or time budget, its cost to a target, and a width
// matched to a parameter count, through the lrbench binary (suite Slow*, label slow).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

using namespace std::chrono_literals;
using test::Child;
using test::TempDir;

// One tiny Transformer on short ListOps, one seed; `length` and `extra` go into [train].
std::string budget_sweep(const std::string& length, const std::string& extra = "", const std::string& extra_sweep = "") {
  return R"([sweep]
name = "budget"
seeds = [1]
base_seed = 3
threads = 1
)" + extra_sweep + R"(
[train]
)" + length + R"(
batch_size = 8
eval_every = 10
eval_size = 64
)" + extra + R"(
[[task]]
name = "listops"
seq_len = 48
train_size = 128

[[model]]
name = "transformer"
dim = { match = "params", to = 6000 }
depth = 1
heads = 2
)";
}

std::vector<std::string> run_cmd(const TempDir& t, const std::string& out) {
  return {test::lrbench(), "run", (t / "sweep.toml").string(), "--out", (t / out).string()};
}

RunRecord only_run(const std::filesystem::path& dir) {
  const auto runs = test::read_runs(dir);
  EXPECT_EQ(runs.size(), 1u);
  return runs.begin()->second;
}

TEST(SlowRunLength, AFlopBudgetTrainsWhatItAffordsRecordsItsTargetAndResumesBitIdentical) {
  TempDir t;
  // One step first, to learn the matched model's FLOPs per sample.
  test::write_text(t / "sweep.toml", budget_sweep("steps = 1"));
  ASSERT_EQ(test::run(run_cmd(t, "probe")).code, kExitDone);
  const RunRecord probe = only_run(t / "probe");
  const double fps = probe.metrics.at("flops_per_sample");
  ASSERT_GT(fps, 0);
  const nlohmann::json& match = probe.spec.at("model").at("match").at("dim");
  EXPECT_DOUBLE_EQ(probe.metrics.at("params"), match.at("count").get<double>()) << "the run trains the width the match chose";

  // A budget of 300.5 steps: 300 are taken. A target every run reaches at its first evaluation.
  const double per_step = 3 * fps * 8;
  const std::string budget = fmt::format("flops = {:.17g}", 300.5 * per_step);
  test::write_text(t / "sweep.toml",
                   budget_sweep(budget, "warmup_share = 0.1\ntarget = { metric = \"accuracy\", value = 0.0 }\n", "checkpoint_every = 25\n"));
  const auto validate = test::run({test::lrbench(), "validate", (t / "sweep.toml").string()});
  ASSERT_EQ(validate.code, kExitDone) << validate.output;
  EXPECT_NE(validate.output.find("-> 300 steps"), std::string::npos) << validate.output;
  EXPECT_NE(validate.output.find("warm-up 30 steps"), std::string::npos) << validate.output;
  EXPECT_NE(validate.output.find("dim = " + probe.spec.at("model").at("options").at("dim").dump()), std::string::npos) << validate.output;

  ASSERT_EQ(test::run(run_cmd(t, "ref")).code, kExitDone);
  const RunRecord ref = only_run(t / "ref");
  EXPECT_EQ(ref.metrics.at("steps_done"), 300);
  EXPECT_DOUBLE_EQ(ref.metrics.at("train_flops"), 300 * per_step);
  EXPECT_EQ(ref.metrics.at("target_reached"), 1);
  EXPECT_EQ(ref.metrics.at("target_step"), 10);
  EXPECT_DOUBLE_EQ(ref.metrics.at("target_flops"), 10 * per_step);
  const auto& times = ref.curves.at("step_seconds");
  EXPECT_DOUBLE_EQ(ref.metrics.at("target_seconds"), std::accumulate(times.begin(), times.begin() + 10, 0.0));
  EXPECT_LT(ref.curves.at("lr").at(0), ref.curves.at("lr").at(29)) << "a warm-up of 30 derived steps";

  // Stopped in the middle and resumed: the same run, bit for bit.
  Child child(run_cmd(t, "out"));
  ASSERT_TRUE(test::wait_for_checkpoint(t / "out", 30s)) << "no periodic checkpoint appeared";
  child.signal(SIGTERM);
  ASSERT_EQ(child.wait(120s), kExitStopped) << child.output();
  ASSERT_EQ(test::run(run_cmd(t, "out")).code, kExitDone);
  const RunRecord resumed = only_run(t / "out");
  EXPECT_EQ(resumed.key, ref.key);
  EXPECT_EQ(resumed.provenance.at("attempt"), 2);
  EXPECT_EQ(test::deterministic_difference(ref, resumed), "");
}

TEST(SlowRunLength, ATargetNeverReachedIsRecordedAsSuchWithoutACost) {
  TempDir t;
  test::write_text(t / "sweep.toml", budget_sweep("steps = 20", "target = { metric = \"accuracy\", value = 1.5 }\n"));
  ASSERT_EQ(test::run(run_cmd(t, "out")).code, kExitDone);
  const RunRecord r = only_run(t / "out");
  EXPECT_EQ(r.metrics.at("target_reached"), 0);
  for (const char* cost : {"target_step", "target_flops", "target_seconds"}) EXPECT_EQ(r.metrics.count(cost), 0u) << cost;
}

TEST(SlowRunLength, ATimeBudgetTrainsForItsSecondsOnTheNamedDevice) {
  TempDir t;
  test::write_text(t / "sweep.toml", budget_sweep("seconds = 1.5", "warmup_share = 0.2\n", "device = \"cpu\"\n"));
  ASSERT_EQ(test::run(run_cmd(t, "out")).code, kExitDone);
  const RunRecord r = only_run(t / "out");
  const auto& times = r.curves.at("step_seconds");
  ASSERT_GT(times.size(), 2u);
  const double spent = std::accumulate(times.begin(), times.end(), 0.0);
  EXPECT_GE(spent, 1.5);
  EXPECT_LT(spent - times.back(), 1.5) << "it stops at the first step boundary past its budget";
  EXPECT_EQ(r.metrics.at("steps_done"), static_cast<double>(times.size()));
  const auto& lr = r.curves.at("lr");
  const auto peak = std::max_element(lr.begin(), lr.end());
  EXPECT_LT(lr.front(), *peak) << "warmed up over a share of the time";
  EXPECT_LT(lr.back(), *peak) << "and decayed over the rest";
}

}  // namespace
}  // namespace lrb
