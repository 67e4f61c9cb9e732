// Data-parallel runs ([sweep] ranks_per_run = 2): two ranks train one run, each on half of
// the global batch, their gradients summed over MPI before every step. Label mpi.
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>

#include "suite/core/exit_codes.h"
#include "suite/mpi/nccl_run_group.h"
#include "suite/runtime/cuda_device.h"
#include "suite/store/run_file.h"
#include "tests/support/results.h"
#include "tests/support/script_test_files.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

using namespace std::chrono_literals;
using test::Child;
using test::TempDir;

std::vector<std::string> run_in(const TempDir& t, int ranks, const std::string& spec, const std::string& out) {
  std::vector<std::string> argv = test::mpirun(ranks);
  for (const std::string& a : {test::lrbench(), std::string("run"), (t / spec).string(), std::string("--out"), (t / out).string()})
    argv.push_back(a);
  return argv;
}

// The tiny sweep with one attention kind, its seeds and steps as given, and `extra` in [sweep].
std::string sweep(int steps, const std::string& seeds, const std::string& extra, bool dropout) {
  std::string s = test::tiny_sweep(steps, extra);
  s.replace(s.find("seeds = 2"), 9, "seeds = " + seeds);
  s.replace(s.find("[\"softmax\", \"linear\"]"), 21, dropout ? "\"softmax\"" : "\"softmax\"\ndropout = 0.0");
  return s;
}

const RunRecord& only_run(const std::map<std::string, RunRecord>& runs) {
  EXPECT_EQ(runs.size(), 1u);
  return runs.begin()->second;
}

// The 1-rank run and the 2-rank run of one global batch differ only in how float32 sums
// are ordered (a batch's mean over one slice, against two half-slices added): after 30
// AdamW steps their losses agree to about 1e-7 relative; 1e-5 leaves room, and a wrong
// slice, scale or missing sum differs by more than 1e-2 from the first step on.
constexpr double kTolerance = 1e-5;

bool close(double a, double b) { return std::fabs(a - b) <= kTolerance * std::max(1.0, std::fabs(a)); }

// The losses and accuracy of two runs agree at every step, within kTolerance.
void expect_same_curves(const RunRecord& a, const RunRecord& b) {
  for (const char* curve : {"train_loss", "eval_loss", "eval_accuracy"}) {
    const auto& x = a.curves.at(curve);
    const auto& y = b.curves.at(curve);
    ASSERT_EQ(x.size(), y.size()) << curve;
    ASSERT_FALSE(x.empty()) << curve;
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(close(x[i], y[i])) << curve << "[" << i << "]: " << x[i] << " vs " << y[i];
  }
}

TEST(MpiDataParallel, TwoRanksMatchOneRankWithTheSameGlobalBatchAtEveryStep) {
  TempDir t;
  test::write_text(t / "one.toml", sweep(30, "[1]", "", /*dropout=*/false));
  test::write_text(t / "two.toml", sweep(30, "[1]", "ranks_per_run = 2\n", /*dropout=*/false));
  auto one = test::run(run_in(t, 1, "one.toml", "one"));
  ASSERT_EQ(one.code, kExitDone) << one.output;
  auto two = test::run(run_in(t, 2, "two.toml", "two"));
  ASSERT_EQ(two.code, kExitDone) << two.output;
  EXPECT_NE(two.output.find("each run trains on 2 ranks, 1 run(s) at a time"), std::string::npos) << two.output;
  const RunRecord a = only_run(test::read_runs(t / "one")), b = only_run(test::read_runs(t / "two"));
  EXPECT_NE(a.key, b.key) << "the group size is part of the run";
  EXPECT_EQ(b.spec.at("ranks_per_run"), 2);
  expect_same_curves(a, b);
  for (const char* metric : {"eval_loss", "eval_accuracy", "train_loss", "params", "steps_done"})
    EXPECT_TRUE(close(a.metrics.at(metric), b.metrics.at(metric))) << metric;
  // Both members are named, member 0 wrote the file, and the exchange was timed.
  const auto& dp = b.provenance.at("data_parallel");
  EXPECT_EQ(dp.at("ranks_per_run"), 2);
  EXPECT_EQ(dp.at("member"), 0);
  ASSERT_EQ(dp.at("members").size(), 2u);
  EXPECT_EQ(dp.at("members")[1].at("rank"), 1);
  EXPECT_EQ(dp.at("exchange"), "mpi") << "exchange = \"auto\" on the CPU";
  EXPECT_EQ(b.curves.at("allreduce_seconds").size(), 30u);
  EXPECT_GT(b.metrics.at("allreduce_share"), 0.0);
  EXPECT_LT(b.metrics.at("allreduce_share"), 1.0);
  EXPECT_FALSE(a.metrics.count("allreduce_share"));
  // The exchange is a phase of the group's step: with the others it sums to the step.
  for (std::size_t i = 0; i < 30; ++i) {
    double sum = b.curves.at("allreduce_seconds")[i];
    for (const char* phase : {"step_data_seconds", "step_forward_seconds", "step_backward_seconds", "step_optimizer_seconds",
                              "step_other_seconds"})
      sum += b.curves.at(phase)[i];
    EXPECT_NEAR(sum, b.curves.at("step_seconds")[i], 1e-9 * b.curves.at("step_seconds")[i]) << "step " << i;
  }
  // Utilisation is over both members' peaks.
  const double peak = b.provenance.at("matmul_peak").at("flops_per_s").get<double>();
  EXPECT_NEAR(b.metrics.at("flop_utilisation"), b.metrics.at("model_flops_per_s") / (2 * peak), 1e-12);
}

// A model written in PyTorch (model = "torchscript") in a group: its parameters are the
// module's, so the gradient exchange reaches them and two ranks train as one.
TEST(MpiDataParallel, APythonModelTrainsInAGroupAsOnOneRank) {
  TempDir t;
  const auto model = test::script_test_files() / "grid.pt";
  test::write_text(t / "one.toml", test::python_model_sweep(model, 1, 30));
  test::write_text(t / "two.toml", test::python_model_sweep(model, 1, 30, "ranks_per_run = 2\n"));
  auto one = test::run(run_in(t, 1, "one.toml", "one"));
  ASSERT_EQ(one.code, kExitDone) << one.output;
  auto two = test::run(run_in(t, 2, "two.toml", "two"));
  ASSERT_EQ(two.code, kExitDone) << two.output;
  const RunRecord a = only_run(test::read_runs(t / "one")), b = only_run(test::read_runs(t / "two"));
  EXPECT_EQ(b.provenance.at("data_parallel").at("ranks_per_run"), 2);
  EXPECT_EQ(b.curves.at("allreduce_seconds").size(), 30u);
  expect_same_curves(a, b);
  EXPECT_EQ(a.metrics.at("params"), b.metrics.at("params"));
}

// The second time with exchange = "mpi" written out: "auto" chose it on the CPU, so the
// runs are the same runs (the exchange is provenance, not identity) with the same bits.
TEST(MpiDataParallel, RepeatedSweepIsBitIdenticalWithDropout) {
  TempDir t;
  test::write_text(t / "two.toml", sweep(20, "2", "ranks_per_run = 2\n", /*dropout=*/true));
  test::write_text(t / "mpi.toml", sweep(20, "2", "ranks_per_run = 2\nexchange = \"mpi\"\n", /*dropout=*/true));
  auto first = test::run(run_in(t, 2, "two.toml", "first"));
  ASSERT_EQ(first.code, kExitDone) << first.output;
  auto second = test::run(run_in(t, 2, "mpi.toml", "second"));
  ASSERT_EQ(second.code, kExitDone) << second.output;
  const auto a = test::read_runs(t / "first"), b = test::read_runs(t / "second");
  ASSERT_EQ(a.size(), 2u);
  for (const auto& [key, rec] : a) {
    ASSERT_TRUE(b.count(key));
    EXPECT_EQ(test::deterministic_difference(rec, b.at(key)), "") << key;
    EXPECT_EQ(b.at(key).provenance.at("data_parallel").at("exchange"), "mpi");
  }
}

TEST(MpiDataParallel, ANcclExchangeInABuildWithoutNcclIsRefusedWhereItIsWritten) {
  if (nccl_compiled()) GTEST_SKIP() << "this build has NCCL";
  TempDir t;
  test::write_text(t / "two.toml", sweep(10, "[1]", "ranks_per_run = 2\ndevice = \"cuda\"\nexchange = \"nccl\"\n", true));
  auto r = test::run(run_in(t, 2, "two.toml", "out"));
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("two.toml:8:12: exchange = \"nccl\" but this lrbench was built without NCCL"), std::string::npos)
      << r.output;
}

// On a machine with two GPUs and a build with NCCL: the group sums over NCCL (chosen by
// "auto") and trains as the same group summing over MPI through host memory.
TEST(MpiDataParallel, OverNcclTwoGpusTrainAsOverMpi) {
  if (!nccl_compiled()) GTEST_SKIP() << "this lrbench was built without NCCL (LRB_WITH_NCCL off)";
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two CUDA devices, this machine has " << cuda_device_count();
  TempDir t;
  test::write_text(t / "nccl.toml", sweep(30, "[1]", "ranks_per_run = 2\ndevice = \"cuda\"\n", /*dropout=*/false));
  test::write_text(t / "mpi.toml", sweep(30, "[1]", "ranks_per_run = 2\ndevice = \"cuda\"\nexchange = \"mpi\"\n", false));
  auto nccl = test::run(run_in(t, 2, "nccl.toml", "nccl"));
  ASSERT_EQ(nccl.code, kExitDone) << nccl.output;
  auto mpi = test::run(run_in(t, 2, "mpi.toml", "mpi"));
  ASSERT_EQ(mpi.code, kExitDone) << mpi.output;
  const RunRecord a = only_run(test::read_runs(t / "nccl")), b = only_run(test::read_runs(t / "mpi"));
  EXPECT_EQ(a.provenance.at("data_parallel").at("exchange"), "nccl");
  EXPECT_EQ(a.provenance.at("data_parallel").at("nccl_version"), nccl_version());
  EXPECT_EQ(b.provenance.at("data_parallel").at("exchange"), "mpi");
  expect_same_curves(a, b);
}

TEST(MpiDataParallel, SigtermToOneMemberStopsTheGroupAndResumesBitIdentical) {
  TempDir t;
  test::write_text(t / "two.toml", sweep(400, "[1]", "ranks_per_run = 2\ncheckpoint_every = 25\n", /*dropout=*/true));
  auto reference = test::run(run_in(t, 2, "two.toml", "ref"));
  ASSERT_EQ(reference.code, kExitDone) << reference.output;

  Child job(run_in(t, 2, "two.toml", "out"));
  const auto ckpt_dir = t / "out" / "checkpoints";
  ASSERT_TRUE(test::wait_for_checkpoint(t / "out", 30s)) << "no periodic checkpoint appeared\n" << job.output();
  // Only member 1 is told: the group agrees on the step, member 0 checkpoints.
  const auto ranks = test::mpi_ranks_of(job.pid());
  ASSERT_EQ(ranks.size(), 2u) << job.output();
  kill(ranks.at(1), SIGTERM);
  ASSERT_EQ(job.wait(120s), kExitStopped) << job.output();
  const RunRecord stopped = only_run(test::read_runs(t / "out"));
  EXPECT_EQ(stopped.status, RunStatus::Stopped);
  EXPECT_NE(stopped.error.find("another rank of the run's group was asked to stop"), std::string::npos) << stopped.error;
  const double at = stopped.metrics.at("steps_done");
  EXPECT_GT(at, 0);
  EXPECT_LT(at, 400);
  EXPECT_TRUE(std::filesystem::exists(ckpt_dir / (stopped.key + ".pt")));

  auto resumed = test::run(run_in(t, 2, "two.toml", "out"));
  ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
  const RunRecord done = only_run(test::read_runs(t / "out"));
  EXPECT_EQ(test::deterministic_difference(only_run(test::read_runs(t / "ref")), done), "");
  EXPECT_EQ(done.provenance.at("attempt"), 2);
  EXPECT_EQ(done.provenance.at("resumed_from_step"), static_cast<int>(at));
  EXPECT_FALSE(std::filesystem::exists(ckpt_dir / (stopped.key + ".pt")));
}

TEST(MpiDataParallel, KillNineOfOneMemberEndsTheJobAndTheRerunCompletesEveryRunOnce) {
  TempDir t;
  test::write_text(t / "two.toml", sweep(150, "4", "ranks_per_run = 2\n", /*dropout=*/true));
  Child job(run_in(t, 2, "two.toml", "out"));
  ASSERT_TRUE(job.wait_for_output("[2/4]", 300s)) << job.output();
  std::map<std::string, std::string> finished;
  for (const auto& e : std::filesystem::directory_iterator(t / "out" / "runs"))
    if (e.path().filename().string()[0] != '.') finished[e.path().string()] = test::file_sha256(e.path());
  ASSERT_GE(finished.size(), 2u);
  const auto ranks = test::mpi_ranks_of(job.pid());
  ASSERT_EQ(ranks.size(), 2u) << job.output();
  kill(ranks.at(1), SIGKILL);  // member 1: member 0 is left waiting for its gradients
  EXPECT_NE(job.wait(120s), 0) << job.output();

  auto rerun = test::run(run_in(t, 2, "two.toml", "out"));
  ASSERT_EQ(rerun.code, kExitDone) << rerun.output;
  const auto runs = test::read_runs(t / "out");
  EXPECT_EQ(runs.size(), 4u);
  for (const auto& e : std::filesystem::directory_iterator(t / "out" / "runs"))
    EXPECT_NE(e.path().filename().string()[0], '.') << "temporary file left: " << e.path();
  for (const auto& [path, sha] : finished) EXPECT_EQ(test::file_sha256(path), sha) << path << " was rewritten";
  for (const auto& [k, rec] : runs) EXPECT_EQ(rec.status, RunStatus::Ok) << rec.error;
}

TEST(MpiDataParallel, AStepThatFailsFailsTheRunForTheWholeGroupAndTheSweepGoesOn) {
  TempDir t;
  // 64 KiB cannot hold a step: every member fails at step 0, member 0 records why.
  std::string s = sweep(10, "2", "ranks_per_run = 2\n", /*dropout=*/true);
  s.replace(s.find("eval_size = 64"), 14, "eval_size = 64\nmemory_budget = \"64KiB\"");
  test::write_text(t / "two.toml", s);
  auto r = test::run(run_in(t, 2, "two.toml", "out"));
  EXPECT_EQ(r.code, kExitFailedRuns) << r.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& [k, rec] : runs) {
    EXPECT_EQ(rec.status, RunStatus::Failed);
    EXPECT_NE(rec.error.find("memory budget exceeded"), std::string::npos) << rec.error;
  }
}

TEST(MpiDataParallel, ARankCountThatRanksPerRunDoesNotDivideIsRefused) {
  TempDir t;
  test::write_text(t / "two.toml", sweep(10, "[1]", "ranks_per_run = 2\n", /*dropout=*/true));
  auto r = test::run(run_in(t, 3, "two.toml", "out"));
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("ranks_per_run = 2 does not divide the job's 3 rank(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("two.toml:6:17"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "out" / "runs" ) && !std::filesystem::is_empty(t / "out" / "runs"));
}

}  // namespace
}  // namespace lrb
