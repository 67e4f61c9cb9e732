// End to end: the lrbench binary on real sweep files — determinism, stop and resume,
// crash recovery, damaged files, failed runs. Suites named Slow* (label slow) and Mpi*
// (label mpi, 2 ranks).
#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "suite/core/exit_codes.h"
#include "suite/runtime/precision.h"
#include "suite/store/run_file.h"
#include "tests/support/damage.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

using namespace std::chrono_literals;
using test::Child;
using test::TempDir;

std::vector<std::string> run_cmd(const TempDir& t, const std::string& spec = "sweep.toml", const std::string& out = "out") {
  return {test::lrbench(), "run", (t / spec).string(), "--out", (t / out).string()};
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void expect_same_runs(const std::filesystem::path& a, const std::filesystem::path& b, std::size_t expected) {
  const auto ra = test::read_runs(a), rb = test::read_runs(b);
  ASSERT_EQ(ra.size(), expected);
  ASSERT_EQ(rb.size(), expected);
  for (const auto& [key, rec] : ra) {
    ASSERT_TRUE(rb.count(key)) << key;
    EXPECT_EQ(test::deterministic_difference(rec, rb.at(key)), "") << key;
  }
}

TEST(SlowSweep, SameSpecTwiceGivesBitIdenticalMetrics) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  auto a = test::run(run_cmd(t, "sweep.toml", "a"));
  ASSERT_EQ(a.code, kExitDone) << a.output;
  auto b = test::run(run_cmd(t, "sweep.toml", "b"));
  ASSERT_EQ(b.code, kExitDone) << b.output;
  expect_same_runs(t / "a", t / "b", 4);
  for (const auto& [key, rec] : test::read_runs(t / "a")) {
    EXPECT_EQ(rec.status, RunStatus::Ok);
    EXPECT_EQ(rec.curves.at("eval_step").size(), 3u);  // steps 10, 20, 30
    EXPECT_GT(rec.metrics.at("params"), 0);
    EXPECT_GT(rec.metrics.at("peak_bytes"), 0);
    EXPECT_GT(rec.metrics.at("samples_per_s"), 0);
    EXPECT_EQ(rec.provenance.at("threads"), 1);
    // Model FLOP utilisation agrees with the figures it comes from: a step's FLOPs are
    // 3 x forward FLOPs x batch, the batch per second is samples_per_s, the peak the one
    // measured for this rank (provenance).
    const double achieved = rec.metrics.at("model_flops_per_s");
    EXPECT_NEAR(achieved, 3 * rec.metrics.at("flops_per_sample") * rec.metrics.at("samples_per_s"), 1e-9 * achieved);
    const double peak = rec.provenance.at("matmul_peak").at("flops_per_s").get<double>();
    ASSERT_GT(peak, 0);
    EXPECT_NEAR(rec.metrics.at("flop_utilisation"), achieved / peak, 1e-12);
    // Where each step went: the phases sum to the step exactly (the rest is "other", never
    // negative). Their medians need not sum to the step's median (a median of parts is not
    // a part of the median; on a loaded machine they differ by a third and more), so only
    // their presence is checked.
    const auto& step = rec.curves.at("step_seconds");
    for (const char* phase : {"step_data_seconds", "step_forward_seconds", "step_backward_seconds", "step_optimizer_seconds",
                              "step_other_seconds"}) {
      ASSERT_EQ(rec.curves.at(phase).size(), step.size()) << phase;
      EXPECT_TRUE(std::isfinite(rec.metrics.at(std::string(phase) + "_median"))) << phase;
    }
    for (std::size_t i = 0; i < step.size(); ++i) {
      double sum = 0;
      for (const char* phase : {"step_data_seconds", "step_forward_seconds", "step_backward_seconds", "step_optimizer_seconds",
                                "step_other_seconds"})
        sum += rec.curves.at(phase)[i];
      EXPECT_NEAR(sum, step[i], 1e-9 * step[i]) << "step " << i;
      EXPECT_GE(rec.curves.at("step_other_seconds")[i], -1e-12) << "step " << i;
      EXPECT_GT(rec.curves.at("step_forward_seconds")[i], 0) << "step " << i;
    }
  }
}

TEST(SlowSweep, FinishedSweepRunsNothingAgain) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(10));
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  std::map<std::string, std::string> before;
  for (const auto& e : std::filesystem::directory_iterator(t / "out" / "runs")) before[e.path().string()] = test::file_sha256(e.path());
  auto again = test::run(run_cmd(t));
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("4 were already finished"), std::string::npos) << again.output;
  for (const auto& [path, sha] : before) EXPECT_EQ(test::file_sha256(path), sha);
}

TEST(SlowSweep, BadConfigExitsTwoAndRunsNothing) {
  TempDir t;
  std::string spec = test::tiny_sweep();
  spec.replace(spec.find("batch_size"), 10, "batchsize");
  test::write_text(t / "sweep.toml", spec);
  auto r = test::run(run_cmd(t));
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("sweep.toml:9:1: unknown key 'batchsize' in [train]; did you mean 'batch_size'?"), std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "out"));
}

TEST(SlowSweep, Bf16IsRefusedWithoutTheHardwareAndRunsEmulatedWhenAskedSayingSo) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(10, "", "precision = [\"fp32\", \"bf16\"]\n"));
  const Bf16Support cpu = bf16_support(at::Device(at::kCPU));
  if (!cpu.native) {
    const auto refused = test::run(run_cmd(t));
    EXPECT_EQ(refused.code, kExitUsage) << refused.output;
    EXPECT_NE(refused.output.find("sweep.toml:12:1: precision = \"bf16\" needs bf16 arithmetic in hardware, and this CPU has "
                                  "neither AVX512-BF16 nor AMX-BF16"),
              std::string::npos)
        << refused.output;
    EXPECT_NE(refused.output.find("LRB_BF16_WITHOUT_HARDWARE=1"), std::string::npos) << refused.output;
    EXPECT_FALSE(std::filesystem::exists(t / "out"));
  }
  const auto ran = test::run(run_cmd(t), 600s, {"LRB_BF16_WITHOUT_HARDWARE=1"});
  ASSERT_EQ(ran.code, kExitDone) << ran.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 8u);
  std::map<std::string, std::vector<double>> loss_by_twin[2];  // [bf16?][model and seed]
  for (const auto& [key, r] : runs) {
    ASSERT_EQ(r.status, RunStatus::Ok) << r.error;
    const bool bf16 = r.spec.at("train").contains("precision");
    const auto& p = r.provenance.at("precision");
    EXPECT_EQ(p.at("precision"), bf16 ? "bf16" : "fp32");
    if (bf16) {
      EXPECT_EQ(p.at("native"), cpu.native);
      EXPECT_EQ(p.at("autocast_dtype"), "bfloat16");
      if (!cpu.native) {
        EXPECT_NE(p.at("how").get<std::string>().find("emulated"), std::string::npos) << p.dump();
      }
    }
    EXPECT_TRUE(std::isfinite(r.metrics.at("eval_accuracy")));
    const std::string twin = r.spec.at("model").dump() + "/" + r.spec.at("seed_index").dump();
    loss_by_twin[bf16][twin] = r.curves.at("train_loss");
  }
  // The same model and seed in bf16 computes other numbers than in fp32, close to them.
  ASSERT_EQ(loss_by_twin[0].size(), 4u);
  for (const auto& [twin, fp32] : loss_by_twin[0]) {
    const auto& bf16 = loss_by_twin[1].at(twin);
    ASSERT_EQ(bf16.size(), fp32.size());
    EXPECT_NE(bf16, fp32) << twin;
    EXPECT_NEAR(bf16.front(), fp32.front(), 0.05 * std::abs(fp32.front())) << twin;
  }
}

// The tiny sweep (10 steps) run to its end into t/out: its runs, by key.
std::map<std::string, RunRecord> finished_tiny_sweep(const TempDir& t) {
  test::write_text(t / "sweep.toml", test::tiny_sweep(10));
  const auto run = test::run(run_cmd(t, "sweep.toml", "out"));
  EXPECT_EQ(run.code, kExitDone) << run.output;
  return test::read_runs(t / "out");
}

TEST(SlowSweep, DamagedResultFilesAreNamedQuarantinedAndRecomputed) {
  TempDir t;
  const auto original = finished_tiny_sweep(t);
  ASSERT_EQ(original.size(), 4u);
  std::vector<std::filesystem::path> files;
  for (const auto& [key, rec] : original) files.push_back(t / "out" / "runs" / (key + ".h5"));
  // A truncated file, a flipped byte inside a curve's data, a file without its marker (as
  // a faulty writer would leave it: its digest matches).
  std::filesystem::resize_file(files[0], std::filesystem::file_size(files[0]) / 2);
  test::flip_byte(files[1], test::chunk_offset(files[1], "/curves/train_loss") + 3, 0x40);
  test::edit_hdf5_root(files[2], [](hid_t f) { ASSERT_GE(H5Adelete(f, "complete"), 0); });
  test::reseal(files[2]);

  auto merged = test::run({test::lrbench(), "merge", (t / "out").string()});
  ASSERT_EQ(merged.code, kExitDone) << merged.output;
  EXPECT_NE(merged.output.find(files[0].filename().string() + ": truncated: "), std::string::npos) << merged.output;
  EXPECT_NE(merged.output.find(files[1].filename().string() + ": checksum error: the file's SHA-256"), std::string::npos)
      << merged.output;
  EXPECT_NE(merged.output.find(files[2].filename().string() + ": incomplete"), std::string::npos) << merged.output;
  EXPECT_NE(merged.output.find("1 run(s), 3 bad file(s)"), std::string::npos) << merged.output;
  auto report = test::run({test::lrbench(), "report", (t / "out").string()});
  EXPECT_NE(report.output.find("bad result file"), std::string::npos) << report.output;

  auto resumed = test::run(run_cmd(t, "sweep.toml", "out"));
  ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
  EXPECT_NE(resumed.output.find("3 ran now"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("1 were already finished"), std::string::npos) << resumed.output;
  std::size_t quarantined = 0;
  for (const auto& e : std::filesystem::directory_iterator(t / "out" / "quarantine"))
    if (e.path().extension() != ".reason") ++quarantined;
  EXPECT_EQ(quarantined, 3u);
  const auto recomputed = test::read_runs(t / "out");
  ASSERT_EQ(recomputed.size(), 4u);
  for (const auto& [key, rec] : original) EXPECT_EQ(test::deterministic_difference(rec, recomputed.at(key)), "") << key;
}

// A process killed after publishing a run file and before removing the run's checkpoint
// (found by the random fault trials): the next start removes the checkpoint of a finished
// run, and leaves the run as it is.
TEST(SlowSweep, ACheckpointLeftBesideAFinishedRunIsRemovedAtTheNextStart) {
  TempDir t;
  const auto original = finished_tiny_sweep(t);
  ASSERT_EQ(original.size(), 4u);
  const std::string key = original.begin()->first;
  const auto left = t / "out" / "checkpoints" / (key + ".pt");
  std::filesystem::create_directories(left.parent_path());
  test::write_text(left, "a checkpoint its process did not remove");
  auto again = test::run(run_cmd(t, "sweep.toml", "out"));
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("removed the checkpoint of finished run " + key.substr(0, 12)), std::string::npos)
      << again.output;
  EXPECT_NE(again.output.find("4 were already finished"), std::string::npos) << again.output;
  EXPECT_FALSE(std::filesystem::exists(left));
  const auto after = test::read_runs(t / "out");
  for (const auto& [k, rec] : original) EXPECT_EQ(test::deterministic_difference(rec, after.at(k)), "") << k;
}

TEST(SlowSweep, SigtermCheckpointsExitsThreeAndResumesBitIdentical) {
  TempDir t;
  // One long run; periodic checkpoints tell the test that training is under way.
  std::string spec = test::tiny_sweep(400, "checkpoint_every = 25\n");
  spec.replace(spec.find("seeds = 2"), 9, "seeds = [1]");
  spec.replace(spec.find("[\"softmax\", \"linear\"]"), 21, "\"softmax\"");
  test::write_text(t / "sweep.toml", spec);

  auto reference = test::run(run_cmd(t, "sweep.toml", "ref"));
  ASSERT_EQ(reference.code, kExitDone) << reference.output;

  Child child(run_cmd(t));
  const auto ckpt_dir = t / "out" / "checkpoints";
  ASSERT_TRUE(test::wait_for_checkpoint(t / "out", 30s)) << "no periodic checkpoint appeared";
  child.signal(SIGTERM);
  ASSERT_EQ(child.wait(120s), kExitStopped) << child.output();
  auto stopped = test::read_runs(t / "out");
  ASSERT_EQ(stopped.size(), 1u);
  const RunRecord& s = stopped.begin()->second;
  EXPECT_EQ(s.status, RunStatus::Stopped);
  EXPECT_NE(s.error.find("run the same command again"), std::string::npos);
  const double at = s.metrics.at("steps_done");
  EXPECT_GT(at, 0);
  EXPECT_LT(at, 400);
  EXPECT_TRUE(std::filesystem::exists(ckpt_dir / (s.key + ".pt")));

  auto resumed = test::run(run_cmd(t));
  ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
  expect_same_runs(t / "ref", t / "out", 1);
  const auto done = test::read_runs(t / "out");
  EXPECT_EQ(done.begin()->second.provenance.at("attempt"), 2);
  EXPECT_EQ(done.begin()->second.provenance.at("resumed_from_step"), static_cast<int>(at));
  EXPECT_FALSE(std::filesystem::exists(ckpt_dir / (s.key + ".pt")));
}

TEST(SlowSweep, ClaimsAreListedByValidateAndJudgedFirstByReport) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(20) + R"(
[[claim]]
name = "softmax-vs-linear"
statement = "softmax attention is more accurate than linear attention on short ListOps"
source = "a test"
kind = "better"
metric = "accuracy"
a = { model = "transformer", attention = "softmax" }
b = { model = "transformer", attention = "linear" }
)");
  auto validate = test::run({test::lrbench(), "validate", (t / "sweep.toml").string()});
  ASSERT_EQ(validate.code, kExitDone) << validate.output;
  EXPECT_NE(validate.output.find("softmax-vs-linear (better, eval_accuracy)"), std::string::npos) << validate.output;
  ASSERT_EQ(test::run(run_cmd(t)).code, kExitDone);
  auto md = test::run({test::lrbench(), "report", (t / "out").string(), "--format", "md"});
  ASSERT_EQ(md.code, kExitDone) << md.output;
  const auto claims = md.output.find("## claims — verdicts"), first_task = md.output.find("## listops");
  ASSERT_NE(claims, std::string::npos) << md.output;
  EXPECT_LT(claims, first_task);
  EXPECT_NE(md.output.find("| chance |"), std::string::npos) << md.output;
  auto js = test::run({test::lrbench(), "report", (t / "out").string(), "--format", "json"});
  ASSERT_EQ(js.code, kExitDone) << js.output;
  const auto j = nlohmann::json::parse(js.output);
  ASSERT_EQ(j.at("claims").size(), 1u);
  const auto& c = j.at("claims")[0];
  EXPECT_EQ(c.at("name"), "softmax-vs-linear");
  EXPECT_EQ(c.at("n"), 2);  // two matched seeds
  const std::set<std::string> verdicts = {"supported", "refuted", "inconclusive"};
  EXPECT_TRUE(verdicts.count(c.at("verdict").get<std::string>())) << c.dump();
  for (const auto& cell : j.at("cells")) {
    ASSERT_TRUE(cell.at("chance").is_number()) << cell.dump();
    EXPECT_GT(cell.at("chance").get<double>(), 0.0);
    EXPECT_LT(cell.at("chance").get<double>(), 1.0);
  }
}

TEST(SlowSweep, MemoryBudgetFailureIsRecordedAndSweepGoesOn) {
  TempDir t;
  // 64 KiB cannot hold the model, its optimizer state and a step's activations.
  test::write_text(t / "sweep.toml", test::tiny_sweep(10, "", "memory_budget = \"64KiB\"\n"));
  auto r = test::run(run_cmd(t));
  EXPECT_EQ(r.code, kExitFailedRuns) << r.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 4u);
  int failed = 0;
  for (const auto& [k, rec] : runs)
    if (rec.status == RunStatus::Failed) {
      ++failed;
      EXPECT_NE(rec.error.find("memory budget exceeded"), std::string::npos) << rec.error;
    }
  EXPECT_GT(failed, 0);
  EXPECT_NE(r.output.find("FAILED"), std::string::npos);
  // A failed run is finished: the next invocation runs nothing but still reports the failures.
  auto again = test::run(run_cmd(t));
  EXPECT_EQ(again.code, kExitFailedRuns) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
}

TEST(MpiSweep, OneRankAndTwoRanksGiveBitIdenticalRuns) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  auto one = test::run(concat(test::mpirun(1), run_cmd(t, "sweep.toml", "one")));
  ASSERT_EQ(one.code, kExitDone) << one.output;
  auto two = test::run(concat(test::mpirun(2), run_cmd(t, "sweep.toml", "two")));
  ASSERT_EQ(two.code, kExitDone) << two.output;
  expect_same_runs(t / "one", t / "two", 4);
  std::set<int> ranks;
  for (const auto& [k, rec] : test::read_runs(t / "two")) ranks.insert(rec.provenance.at("rank").get<int>());
  EXPECT_EQ(ranks.size(), 2u) << "both ranks should have run work";
}

TEST(MpiSweep, KillNineOfOneRankThenRerunCompletesEveryRunOnce) {
  TempDir t;
  std::string spec = test::tiny_sweep(150);
  spec.replace(spec.find("seeds = 2"), 9, "seeds = 4");
  test::write_text(t / "sweep.toml", spec);
  Child job(concat(test::mpirun(2), run_cmd(t)));
  ASSERT_TRUE(job.wait_for_output("[2/8]", 300s)) << job.output();
  std::map<std::string, std::string> finished;
  for (const auto& e : std::filesystem::directory_iterator(t / "out" / "runs"))
    if (e.path().filename().string()[0] != '.') finished[e.path().string()] = test::file_sha256(e.path());
  ASSERT_GE(finished.size(), 2u);
  const std::map<int, pid_t> ranks = test::mpi_ranks_of(job.pid());
  ASSERT_EQ(ranks.size(), 2u) << job.output();
  kill(ranks.at(1), SIGKILL);
  const int code = job.wait(120s);
  EXPECT_NE(code, 0) << job.output();

  auto rerun = test::run(concat(test::mpirun(2), run_cmd(t)));
  ASSERT_EQ(rerun.code, kExitDone) << rerun.output;
  const auto runs = test::read_runs(t / "out");
  EXPECT_EQ(runs.size(), 8u);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(t / "out" / "runs")) {
    ++files;
    EXPECT_NE(e.path().filename().string()[0], '.') << "temporary file left: " << e.path();
  }
  EXPECT_EQ(files, 8u);
  for (const auto& [path, sha] : finished) EXPECT_EQ(test::file_sha256(path), sha) << path << " was rewritten";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(rerun.output, m, std::regex("(\\d+) were already finished"))) << rerun.output;
  EXPECT_GE(std::stoul(m[1]), finished.size());
  EXPECT_LT(std::stoul(m[1]), 8u) << "the killed rank's run must run again";
  for (const auto& [k, rec] : runs) EXPECT_EQ(rec.status, RunStatus::Ok);
}

// Every collective of a sweep's job is a step of suite/sweep/job_steps.h. A rank that
// leaves at any step (an exception, an early return) ends the job with an error at the
// others' next step, never a hang; a rank that skips one (a collective out of order) aborts
// the job naming both steps. LRB_FAULT_JOB_STEP=<rank>:<step>:leave|skip injects each.
TEST(MpiSweep, ARankThatLeavesAtAnyStepEndsTheJobWithAnErrorNotAHang) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  const std::vector<std::pair<int, std::string>> leaves = {
      {1, "sweep_read"},     {1, "folder_opened"}, {1, "started"},   {1, "pending_shared"}, {1, "ready_to_run"},
      {1, "runs_done"},      {1, "exit_code"},     {0, "folder_opened"}, {0, "pending_shared"}, {0, "runs_done"}};
  for (const auto& [rank, step] : leaves) {
    const std::string out = "out-" + std::to_string(rank) + "-" + step;
    const std::string fault = std::to_string(rank) + ":" + step + ":leave";
    const auto r = test::run(concat(test::mpirun(2), run_cmd(t, "sweep.toml", out)), 120s, {"LRB_FAULT_JOB_STEP=" + fault});
    EXPECT_EQ(r.code, kExitInternal) << fault << "\n" << r.output;
    EXPECT_NE(r.output.find("fault trial: rank " + std::to_string(rank) + " leaves at step " + step), std::string::npos)
        << fault << "\n" << r.output;
  }
  // The same sweep with no fault: the folder left by a rank that left after its runs resumes.
  const auto again = test::run(concat(test::mpirun(2), run_cmd(t, "sweep.toml", "out-1-runs_done")), 300s);
  EXPECT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("were already finished"), std::string::npos) << again.output;
}

TEST(MpiSweep, ARankThatSkipsAStepAbortsTheJobNamingBoth) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  const auto r = test::run(concat(test::mpirun(2), run_cmd(t)), 120s, {"LRB_FAULT_JOB_STEP=1:folder_opened:skip"});
  EXPECT_NE(r.code, kExitDone) << r.output;
  EXPECT_NE(r.code, -1) << "the job hung:\n" << r.output;
  EXPECT_NE(r.output.find("ranks are at different steps of the job (folder_opened and started)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lrb
