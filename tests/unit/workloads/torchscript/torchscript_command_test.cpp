// A PyTorch model in a sweep, through the lrbench program: it trains above chance, stops
// and resumes bit-identically, a bad file stops the sweep before any run (exit 2, at the
// file's line in the sweep), a changed file is a new run, and same_init is warned about.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/script_test_files.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::TempDir;

std::string grid_sweep(const fs::path& model, int seeds, int steps, const std::string& model_extra = "") {
  return test::python_model_sweep(model, seeds, steps, "checkpoint_every = 25\n", model_extra);
}

std::vector<std::string> run_cmd(const TempDir& t, const std::string& out) {
  return {test::lrbench(), "run", (t / "sweep.toml").string(), "--out", (t / out).string()};
}

TEST(TorchScriptCommand, TrainsAboveChanceAndResumesBitIdentically) {
  TempDir t;
  fs::copy_file(test::script_test_files() / "grid.pt", t / "model.pt");
  test::write_text(t / "sweep.toml", grid_sweep(t / "model.pt", 1, 1500));
  const auto reference = test::run(run_cmd(t, "ref"));
  ASSERT_EQ(reference.code, kExitDone) << reference.output;
  const auto ref = test::read_runs(t / "ref");
  ASSERT_EQ(ref.size(), 1u);
  const RunRecord& r = ref.begin()->second;
  EXPECT_GT(r.metrics.at("eval_accuracy"), r.metrics.at("eval_chance") + 0.3) << "the model did not learn";
  EXPECT_GT(r.metrics.at("params"), 1000);
  EXPECT_GT(r.metrics.at("flops_per_sample"), 100000);
  EXPECT_EQ(r.provenance.at("model").at("sha256"), test::file_sha256(t / "model.pt"));
  EXPECT_EQ(r.provenance.at("model").at("initialisation"), "reset_parameters(seed)");

  test::Child child(run_cmd(t, "out"));
  ASSERT_TRUE(test::wait_for_checkpoint(t / "out", 60s)) << "no periodic checkpoint appeared";
  child.signal(SIGTERM);
  ASSERT_EQ(child.wait(120s), kExitStopped) << child.output();
  const auto stopped = test::read_runs(t / "out");
  ASSERT_EQ(stopped.size(), 1u);
  const double at = stopped.begin()->second.metrics.at("steps_done");
  EXPECT_GT(at, 0);
  EXPECT_LT(at, 1500);
  const auto resumed = test::run(run_cmd(t, "out"));
  ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
  const auto done = test::read_runs(t / "out");
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done.begin()->second.provenance.at("resumed_from_step"), static_cast<int>(at));
  EXPECT_EQ(test::deterministic_difference(r, done.begin()->second), "");
}

TEST(TorchScriptCommand, ABadFileStopsTheSweepBeforeAnyRunAtItsLine) {
  TempDir t;
  test::write_text(t / "sweep.toml", grid_sweep(test::script_test_files() / "no_reset.pt", 1, 10));
  for (const char* command : {"validate", "run"}) {
    std::vector<std::string> argv{test::lrbench(), command, (t / "sweep.toml").string()};
    if (std::string(command) == "run") argv.insert(argv.end(), {"--out", (t / "out").string()});
    const auto r = test::run(argv);
    EXPECT_EQ(r.code, kExitUsage) << r.output;
    EXPECT_NE(r.output.find("sweep.toml:21:1: in [[model]] 'torchscript': "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("exports no reset_parameters(seed: int)"), std::string::npos) << r.output;
  }
  EXPECT_TRUE(test::read_runs(t / "out").empty());
}

TEST(TorchScriptCommand, AChangedModelFileIsANewRunAndSameInitIsWarned) {
  TempDir t;
  fs::copy_file(test::script_test_files() / "grid.pt", t / "model.pt");
  test::write_text(t / "sweep.toml", grid_sweep(t / "model.pt", 1, 20));
  ASSERT_EQ(test::run(run_cmd(t, "out")).code, kExitDone);
  fs::copy_file(test::script_test_files() / "grid_wider.pt", t / "model.pt", fs::copy_options::overwrite_existing);
  const auto again = test::run(run_cmd(t, "out"));
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("1 ran now"), std::string::npos) << "the changed model was not run: " << again.output;
  EXPECT_EQ(test::read_runs(t / "out").size(), 2u);

  // Two seeds from one set of saved weights: the report says the spread leaves out the
  // initialisation's.
  test::write_text(t / "sweep.toml", grid_sweep(t / "model.pt", 2, 20, "same_init = true\n"));
  ASSERT_EQ(test::run(run_cmd(t, "shared")).code, kExitDone);
  const auto report = test::run({test::lrbench(), "report", (t / "shared").string()});
  EXPECT_NE(report.output.find("1 cell(s) whose seeds all start from the weights saved in the model file (same_init = true)"),
            std::string::npos)
      << report.output;
}

// NaN logits in evaluation (the model is fine in training mode) fail the run with the reason,
// as a non-finite training loss does: an accuracy of NaNs' argmax is no result.
TEST(TorchScriptCommand, NonFiniteEvaluationOutputsFailTheRun) {
  TempDir t;
  test::write_text(t / "sweep.toml", grid_sweep(test::script_test_files() / "nan_in_eval.pt", 1, 10));
  const auto r = test::run(run_cmd(t, "out"));
  EXPECT_EQ(r.code, kExitFailedRuns) << r.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 1u);
  const RunRecord& run = runs.begin()->second;
  EXPECT_EQ(run.status, RunStatus::Failed);
  EXPECT_NE(run.error.find("non-finite evaluation output: 5000 of 5000 logits are NaN or infinite (the first at [0, 0])"),
            std::string::npos)
      << run.error;
  EXPECT_EQ(run.metrics.count("eval_accuracy"), 0u);
}

// A forward that never returns cannot be interrupted: a stop signal ends the process once it
// has waited the grace (exit 3), and step_time_limit fails the call with the reason, in
// `validate` (the trial forward) and in a run (recorded, then exit 3: the rest resumes).
TEST(TorchScriptCommand, AForwardThatNeverReturnsEndsAtAStopSignalAndAtTheStepTimeLimit) {
  TempDir t;
  const fs::path hangs = test::script_test_files() / "hangs.pt";
  test::write_text(t / "sweep.toml", grid_sweep(hangs, 1, 10));
  {
    // validate has nothing to save: a stop signal ends it at once, as it ends any command.
    test::Child validate({test::lrbench(), "validate", (t / "sweep.toml").string()});
    std::this_thread::sleep_for(1s);
    validate.signal(SIGTERM);
    const int code = validate.wait(30s);
    EXPECT_TRUE(code == 128 + SIGTERM || code == kExitStopped) << code << validate.output();
  }
  test::write_text(t / "limited.toml", test::python_model_sweep(hangs, 1, 10, "step_time_limit = \"2s\"\n"));
  const auto limited = test::run({test::lrbench(), "validate", (t / "limited.toml").string()}, 60s);
  EXPECT_EQ(limited.code, kExitUsage) << limited.output;
  EXPECT_NE(limited.output.find("did not return within 2.0 s (step_time_limit)"), std::string::npos) << limited.output;

  // Past the trial forward: the first training step never returns.
  const fs::path later = test::script_test_files() / "hangs_in_training.pt";
  test::write_text(t / "sweep.toml", test::python_model_sweep(later, 2, 10, "step_time_limit = \"2s\"\n"));
  const auto failed = test::run(run_cmd(t, "limit"), 60s);
  EXPECT_EQ(failed.code, kExitStopped) << failed.output;
  EXPECT_NE(failed.output.find("run the same command again to go on with the other runs"), std::string::npos) << failed.output;
  auto runs = test::read_runs(t / "limit");
  ASSERT_EQ(runs.size(), 1u) << "the run in progress is recorded; the other is left for the next command";
  EXPECT_EQ(runs.begin()->second.status, RunStatus::Failed);
  EXPECT_NE(runs.begin()->second.error.find("training step 1 did not return within 2.0 s (step_time_limit)"), std::string::npos)
      << runs.begin()->second.error;

  test::write_text(t / "sweep.toml", grid_sweep(later, 1, 10));
  test::Child stopped(run_cmd(t, "stop"));
  ASSERT_TRUE(stopped.wait_for_output("starts", 60s)) << stopped.output();
  std::this_thread::sleep_for(2s);
  stopped.signal(SIGTERM);
  EXPECT_EQ(stopped.wait(30s), kExitStopped) << stopped.output();
  runs = test::read_runs(t / "stop");
  ASSERT_EQ(runs.size(), 1u) << stopped.output();
  EXPECT_EQ(runs.begin()->second.status, RunStatus::Stopped);
  EXPECT_NE(runs.begin()->second.error.find("stopped by signal 15 at step 0: training step 1 did not return within 5.0 s of the stop"),
            std::string::npos)
      << runs.begin()->second.error;
}

TEST(TorchScriptCommand, FlopsThatCannotBeCountedAreSaidSoInTheTable) {
  TempDir t;
  test::write_text(t / "sweep.toml", grid_sweep(test::script_test_files() / "bias_only.pt", 1, 10));
  ASSERT_EQ(test::run(run_cmd(t, "out")).code, kExitDone);
  const auto report = test::run({test::lrbench(), "report", (t / "out").string()});
  EXPECT_NE(report.output.find("not counted"), std::string::npos) << report.output;
}

}  // namespace
}  // namespace lrb
