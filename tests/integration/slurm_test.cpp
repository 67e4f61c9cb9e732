// Slurm end to end, on the real one-node test cluster of slurm/test_cluster.sh (label
// slurm; scripts/test.sh starts the cluster): `lrbench slurm --submit` in MPI mode and in
// array mode, a USR1 that checkpoints and requeues, a scancel that stops every rank in
// time, and launches that must be refused. Without the cluster every test fails, saying
// how to start it.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "suite/config/shard.h"
#include "suite/core/exit_codes.h"
#include "suite/store/results_folder.h"
#include "tests/support/results.h"
#include "tests/support/slurm_cluster.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::JobFields;
using test::TempDir;

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

using test::read_text;

// Every run of the reference in `out`, ok and bit-identical; nothing else, but where a
// sequential study ran on several ranks, a run of wave 2 that an idle rank started
// (test::speculative_run_of_tiny_sequential_sweep).
void expect_same_runs(const fs::path& reference, const fs::path& out, std::size_t expected,
                      bool ranks_may_speculate = false) {
  const auto ra = test::read_runs(reference), rb = test::read_runs(out);
  ASSERT_EQ(ra.size(), expected);
  if (!ranks_may_speculate) {
    ASSERT_EQ(rb.size(), expected);
  }
  for (const auto& [key, rec] : ra) {
    ASSERT_TRUE(rb.count(key)) << key;
    EXPECT_EQ(rb.at(key).status, RunStatus::Ok) << key;
    EXPECT_EQ(test::deterministic_difference(rec, rb.at(key)), "") << key;
  }
  for (const auto& [key, rec] : rb) {
    if (ra.count(key)) continue;
    const std::string model = rec.spec.at("model").at("name").get<std::string>();
    const auto seed = rec.spec.at("seed_index").get<long long>();
    EXPECT_TRUE(ranks_may_speculate && test::speculative_run_of_tiny_sequential_sweep(model, seed))
        << "a run the reference did not run: " << key << " (" << model << ", seed index " << seed << ")";
  }
}

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string problem = test::use_test_cluster();
    ASSERT_EQ(problem, "") << problem;
  }

  // `lrbench slurm SPEC --out OUT ... --submit`: the job id(s) it printed.
  std::vector<std::string> submit(const fs::path& spec, const fs::path& out, const std::vector<std::string>& flags) {
    auto r = test::run(concat({test::lrbench(), "slurm", spec.string(), "--out", out.string()}, concat(flags, {"--submit"})), 60s);
    EXPECT_EQ(r.code, kExitDone) << r.output;
    std::vector<std::string> ids;
    for (int i = 0; !test::job_id_in(r.output, i).empty(); ++i) {
      ids.push_back(test::job_id_in(r.output, i));
      guard_.add(ids.back());
    }
    EXPECT_FALSE(ids.empty()) << r.output;
    return ids;
  }

  test::JobGuard guard_;
};

// The reference of test::long_sweep(): the same spec under mpirun -np 2, computed once.
class SlurmStop : public SlurmTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    test::write_text(*dir_ / "sweep.toml", test::long_sweep());
    reference_ = test::run(concat(test::mpirun(2), {test::lrbench(), "run", (*dir_ / "sweep.toml").string(), "--out",
                                                    (*dir_ / "ref").string()}));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    SlurmTest::SetUp();
    ASSERT_EQ(reference_.code, kExitDone) << reference_.output;
  }
  static fs::path reference() { return *dir_ / "ref"; }

  static TempDir* dir_;
  static test::Result reference_;
};
TempDir* SlurmStop::dir_ = nullptr;
test::Result SlurmStop::reference_{-1, ""};

TEST_F(SlurmTest, MpiJobWithTwoTasksMatchesMpirunBitForBit) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  auto ref = test::run(concat(test::mpirun(2), {test::lrbench(), "run", (t / "sweep.toml").string(), "--out", (t / "ref").string()}));
  ASSERT_EQ(ref.code, kExitDone) << ref.output;

  const auto ids = submit(t / "sweep.toml", t / "out", {"--ntasks-per-node", "2", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const auto job = test::wait_job_ended(ids[0], 300s);
  const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + ids[0] + ".log"));
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log;
  EXPECT_EQ(test::job_field(job, "ExitCode"), "0:0") << log;
  EXPECT_EQ(test::job_field(job, "Restarts"), "0");
  EXPECT_NE(log.find("attempt 1: done"), std::string::npos) << log;

  expect_same_runs(t / "ref", t / "out", 4);
  std::set<int> ranks;
  for (const auto& [key, rec] : test::read_runs(t / "out")) {
    const auto& p = rec.provenance;
    ranks.insert(p.at("rank").get<int>());
    EXPECT_EQ(p.at("world_size"), 2);
    EXPECT_EQ(p.at("slurm").at("SLURM_JOB_ID"), ids[0]);
    EXPECT_EQ(p.at("slurm").at("SLURM_RESTART_COUNT"), "0");
    EXPECT_EQ(p.at("slurm").at("SLURM_NTASKS"), "2");
    EXPECT_FALSE(p.at("slurm").at("SLURM_JOB_NODELIST").get<std::string>().empty());
  }
  EXPECT_EQ(ranks.size(), 2u) << "both ranks should have run work";
}

TEST_F(SlurmTest, ArrayShardsRunEveryRunOnceAndTheFinalJobReports) {
  TempDir t;
  std::string spec = test::tiny_sweep();
  spec.replace(spec.find("seeds = 2"), 9, "seeds = 4");  // 8 runs over 3 shards
  test::write_text(t / "sweep.toml", spec);

  const auto ids = submit(t / "sweep.toml", t / "out", {"--array=0-2%2", "--time", "10"});
  ASSERT_EQ(ids.size(), 2u) << "the array job and the final job";
  const auto final_job = test::wait_job_ended(ids[1], 420s);
  const std::string final_log = read_text(t / "out" / "slurm" / ("tiny-final-" + ids[1] + ".log"));
  ASSERT_EQ(test::job_field(final_job, "JobState"), "COMPLETED") << final_log;
  EXPECT_EQ(test::job_field(final_job, "ExitCode"), "0:0") << final_log;

  const auto array = test::show_job(ids[0]);
  ASSERT_EQ(array.size(), 3u);
  std::size_t ran_now = 0;
  for (const auto& task : array) {
    EXPECT_EQ(task.at("JobState"), "COMPLETED");
    const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + ids[0] + "_" + task.at("ArrayTaskId") + ".log"));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(log, m, std::regex("shard (\\d)/3: (\\d+) of the sweep's 8 runs: (\\d+) ran now"))) << log;
    EXPECT_EQ(m[1], task.at("ArrayTaskId"));
    EXPECT_EQ(m[2], m[3]) << "a shard runs its own runs, all of them";
    ran_now += std::stoul(m[3]);
  }
  EXPECT_EQ(ran_now, 8u) << "every run ran exactly once over the three shards";

  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 8u);
  for (const auto& [key, rec] : runs) {
    EXPECT_EQ(rec.status, RunStatus::Ok);
    const int shard = shard_of(key, 3);
    EXPECT_EQ(rec.provenance.at("shard"), std::to_string(shard) + "/3");
    EXPECT_EQ(rec.provenance.at("slurm").at("SLURM_ARRAY_TASK_ID"), std::to_string(shard));
    EXPECT_EQ(rec.provenance.at("slurm").at("SLURM_ARRAY_JOB_ID"), ids[0]);
    EXPECT_EQ(rec.provenance.at("attempt"), 1);
  }
  EXPECT_TRUE(fs::exists(t / "out" / "sweep.h5"));
  const std::string report = read_text(t / "out" / "report.txt");
  EXPECT_NE(report.find("listops"), std::string::npos) << report;
  EXPECT_NE(final_log.find("total=8 finished=8"), std::string::npos) << final_log;
}

TEST_F(SlurmStop, Usr1CheckpointsRequeuesAndEndsBitIdentical) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::long_sweep());
  const auto ids = submit(t / "sweep.toml", t / "out", {"--ntasks-per-node", "2", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const std::string id = ids[0];
  ASSERT_TRUE(test::wait_mid_run(t / "out", 2, 120s)) << read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));

  // To the ranks, as `scancel --signal=USR1` sends it: they checkpoint and exit 3.
  ASSERT_EQ(test::run({"scancel", "--signal=USR1", id}).code, 0);
  // Between the attempts: both runs stopped, each with its checkpoint.
  ASSERT_TRUE(test::wait_requeued(id, 60s, 30s)) << read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));
  const auto stopped = test::read_runs(t / "out");
  ASSERT_EQ(stopped.size(), 2u);
  for (const auto& [key, rec] : stopped) {
    EXPECT_EQ(rec.status, RunStatus::Stopped) << key;
    EXPECT_TRUE(fs::exists(t / "out" / "checkpoints" / (key + ".pt"))) << key;
  }

  const auto job = test::wait_job_ended(id, 300s);
  const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log;
  EXPECT_EQ(test::job_field(job, "Restarts"), "1");
  EXPECT_NE(log.find("attempt 1: requeueing: 2 run(s) left"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt 2: done"), std::string::npos) << log;

  expect_same_runs(reference(), t / "out", 2);
  for (const auto& [key, rec] : test::read_runs(t / "out")) {
    EXPECT_EQ(rec.provenance.at("attempt"), 2);
    EXPECT_GT(rec.provenance.at("resumed_from_step").get<int>(), 0);
    EXPECT_EQ(rec.provenance.at("slurm").at("SLURM_RESTART_COUNT"), "1");
    EXPECT_EQ(rec.provenance.at("slurm").at("SLURM_JOB_ID"), id);
  }
  EXPECT_EQ(test::count_checkpoints(t / "out"), 0u);
}

TEST_F(SlurmStop, WarningToTheBatchShellIsForwardedAndRequeues) {
  // Slurm's time-limit warning (--signal=B:USR1@lead) goes to the batch shell only, which
  // must forward it to srun: `scancel --batch --signal=USR1` sends exactly that.
  TempDir t;
  test::write_text(t / "sweep.toml", test::long_sweep());
  const auto ids = submit(t / "sweep.toml", t / "out", {"--ntasks-per-node", "2", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const std::string id = ids[0];
  ASSERT_TRUE(test::wait_mid_run(t / "out", 2, 120s)) << read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));
  ASSERT_EQ(test::run({"scancel", "--batch", "--signal=USR1", id}).code, 0);

  const auto job = test::wait_job_ended(id, 300s);
  const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log;
  EXPECT_EQ(test::job_field(job, "Restarts"), "1") << log;
  EXPECT_NE(log.find("attempt 1: got SIGUSR1: asking every rank to checkpoint and stop"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt 1: srun ended with code 3"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt 2: done"), std::string::npos) << log;
  expect_same_runs(reference(), t / "out", 2);
}

TEST_F(SlurmStop, ScancelStopsEveryRankWithinKillWaitAndResubmittingCompletes) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::long_sweep());
  const auto ids = submit(t / "sweep.toml", t / "out", {"--ntasks-per-node", "2", "--time", "10"});
  ASSERT_EQ(ids.size(), 1u);
  const std::string id = ids[0];
  ASSERT_TRUE(test::wait_mid_run(t / "out", 2, 120s)) << read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));
  const auto ranks = test::job_processes(test::lrbench(), id);
  ASSERT_EQ(ranks.size(), 2u) << "two ranks of job " << id << " should be running";

  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(test::run({"scancel", id}).code, 0);
  // KillWait is 5 s on the test cluster: SIGKILL follows SIGTERM after that.
  bool ranks_gone = false;
  while (std::chrono::steady_clock::now() - t0 < 30s && !ranks_gone) {
    ranks_gone = test::job_processes(test::lrbench(), id).empty();
    if (!ranks_gone) std::this_thread::sleep_for(50ms);
  }
  const double exit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(ranks_gone);
  EXPECT_LT(exit_s, 5.0) << "every rank must be gone within KillWait";
  const auto job = test::wait_job_ended(id, 60s);
  const std::string log = read_text(t / "out" / "slurm" / ("tiny-" + id + ".log"));
  EXPECT_EQ(test::job_field(job, "JobState"), "CANCELLED") << log;
  EXPECT_EQ(test::job_field(job, "Restarts"), "0") << "a cancelled job must not requeue itself\n" << log;
  // The ranks stopped on their own (exit 3, before any SIGKILL) and the shell saw it.
  EXPECT_NE(log.find("srun ended with code 3"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped by SIGTERM"), std::string::npos) << log;

  // Nothing corrupt: every file valid, both runs stopped with their checkpoints, no temporaries.
  const ResultsScan scan = scan_runs(t / "out");
  EXPECT_TRUE(scan.bad.empty()) << scan.bad.front().file << ": " << scan.bad.front().reason;
  ASSERT_EQ(scan.runs.size(), 2u);
  for (const auto& rec : scan.runs) {
    EXPECT_EQ(rec.status, RunStatus::Stopped);
    EXPECT_TRUE(fs::exists(t / "out" / "checkpoints" / (rec.key + ".pt")));
  }
  for (const auto& e : fs::recursive_directory_iterator(t / "out"))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temporary left: " << e.path();

  // The same job again finishes the sweep, bit-identical to one never stopped.
  auto again = test::run({"sbatch", "--parsable", (t / "out" / "slurm" / "tiny.sbatch").string()});
  ASSERT_EQ(again.code, 0) << again.output;
  const std::string id2 = test::job_id_in(again.output);
  guard_.add(id2);
  const auto job2 = test::wait_job_ended(id2, 300s);
  const std::string log2 = read_text(t / "out" / "slurm" / ("tiny-" + id2 + ".log"));
  ASSERT_EQ(test::job_field(job2, "JobState"), "COMPLETED") << log2;
  expect_same_runs(reference(), t / "out", 2);
  for (const auto& [key, rec] : test::read_runs(t / "out")) EXPECT_EQ(rec.provenance.at("attempt"), 2);
}

TEST_F(SlurmTest, LaunchesWithoutPmixOrWithAWrongWorldSizeAreRefusedAndWriteNothing) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  const std::vector<std::string> run = {test::lrbench(), "run", (t / "sweep.toml").string(), "--out", (t / "out").string()};

  for (const std::string mpi : {"pmi2", "none"}) {
    auto r = test::run(concat({"srun", "--mpi=" + mpi, "-n", "2"}, run), 120s);
    EXPECT_NE(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("no PMIx wiring (--mpi=" + mpi + ")"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("srun --mpi=pmix"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(t / "out")) << "--mpi=" << mpi << " wrote into the results folder";
  }
  // A world that is not the Slurm step (here SLURM_NTASKS says 3 for a 2-rank world).
  auto r = test::run(concat({"srun", "--mpi=pmix", "-n", "2", "env", "SLURM_NTASKS=3"}, run), 120s);
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("SLURM_NTASKS=3 but the MPI world has 2 rank(s)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(t / "out"));
}

// A sequential study in array mode: each array runs one wave; its final job judges the look
// and submits the next array and itself, until the study ends. The same looks and verdicts
// as one process, every run once.
TEST_F(SlurmTest, ASequentialStudyChainsAnArrayPerWaveToTheSameVerdicts) {
  TempDir t;
  std::string spec = test::tiny_sequential_sweep();
  spec.replace(spec.find("name = \"tiny-seq\""), 17, "name = \"seq-array\"");
  test::write_text(t / "seq.toml", spec);
  auto ref = test::run({test::lrbench(), "run", (t / "seq.toml").string(), "--out", (t / "ref").string(), "--study-id", "5eed"});
  ASSERT_EQ(ref.code, kExitDone) << ref.output;

  struct CancelChain {  // the later waves' jobs were submitted by the final jobs, not by this test
    ~CancelChain() {
      for (const char* name : {"lrb-seq-array", "lrb-seq-array-final"}) (void)test::run({"scancel", "--name", name}, 30s);
    }
  } cancel_chain;
  const auto ids = submit(t / "seq.toml", t / "out", {"--array=0-1", "--time", "10", "--study-id", "5eed"});
  ASSERT_EQ(ids.size(), 2u);
  // The study has ended when a final job says so; four looks take at most four arrays.
  std::string ended_log;
  const auto deadline = std::chrono::steady_clock::now() + 600s;
  int idle = 0;  // polls in a row with none of the study's jobs in the queue: the chain broke
  while (ended_log.empty() && std::chrono::steady_clock::now() < deadline && idle < 5) {
    std::this_thread::sleep_for(1s);
    const auto queued = test::run({"squeue", "-h", "--name=lrb-seq-array,lrb-seq-array-final"}, 30s);
    idle = queued.code == 0 && queued.output.find_first_not_of(" \n") == std::string::npos ? idle + 1 : 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(t / "out" / "slurm", ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("seq-array-final-", 0) != 0) continue;
      const std::string log = read_text(e.path());
      if (log.find("the sequential study has ended") != std::string::npos) ended_log = log;
    }
  }
  if (ended_log.empty()) {
    std::string logs;
    for (const auto& e : fs::directory_iterator(t / "out" / "slurm"))
      if (e.path().extension() == ".log") logs += "== " + e.path().string() + "\n" + read_text(e.path());
    FAIL() << "no final job saw the study end (" << (idle >= 5 ? "the chain broke" : "within 10 minutes") << "):\n" << logs;
  }
  EXPECT_NE(ended_log.find("(max-reached)"), std::string::npos) << ended_log;
  std::size_t finals = 0, arrays = 0;
  for (const auto& e : fs::directory_iterator(t / "out" / "slurm")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("seq-array-final-", 0) == 0) ++finals;
    else if (name.rfind("seq-array-", 0) == 0 && name.find("_0.log") != std::string::npos) ++arrays;
  }
  // One array per wave at most: a task that starts after its look is complete (its shard
  // had no run in the wave, and the other task had finished) runs its shard of the next
  // wave, so the four looks may take fewer arrays (CI saw three). Each array has its final job.
  EXPECT_GE(arrays, 2u) << "the first final job chained no array";
  EXPECT_LE(arrays, 4u) << "more arrays than waves";
  EXPECT_EQ(finals, arrays) << "one final job per array";
  expect_same_runs(t / "ref", t / "out", 20);
  const auto a = test::run({test::lrbench(), "report", (t / "ref").string(), "--format", "json", "-o", "-"});
  const auto b = test::run({test::lrbench(), "report", (t / "out").string(), "--format", "json", "-o", "-"});
  const auto ja = nlohmann::json::parse(a.output.substr(a.output.find('{')));
  const auto jb = nlohmann::json::parse(b.output.substr(b.output.find('{')));
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(jb["claims"][i]["verdict"], ja["claims"][i]["verdict"]);
    EXPECT_EQ(jb["claims"][i]["looks"], ja["claims"][i]["looks"]);
  }
  EXPECT_TRUE(fs::exists(t / "out" / "report.md"));
}

// A sequential study as one MPI job under Slurm: the ranks judge every look as one process does.
TEST_F(SlurmTest, ASequentialStudyAsOneMpiJobMatchesOneProcess) {
  TempDir t;
  std::string spec = test::tiny_sequential_sweep();
  spec.replace(spec.find("name = \"tiny-seq\""), 17, "name = \"seq-mpi\"");
  test::write_text(t / "seq.toml", spec);
  auto ref = test::run({test::lrbench(), "run", (t / "seq.toml").string(), "--out", (t / "ref").string(), "--study-id", "5eed"});
  ASSERT_EQ(ref.code, kExitDone) << ref.output;
  const auto ids = submit(t / "seq.toml", t / "out", {"--ntasks-per-node", "2", "--time", "10", "--study-id", "5eed"});
  ASSERT_EQ(ids.size(), 1u);
  const auto job = test::wait_job_ended(ids[0], 300s);
  const std::string log = read_text(t / "out" / "slurm" / ("seq-mpi-" + ids[0] + ".log"));
  ASSERT_EQ(test::job_field(job, "JobState"), "COMPLETED") << log;
  EXPECT_NE(log.find("state=max-reached"), std::string::npos) << log;
  expect_same_runs(t / "ref", t / "out", 20, /*ranks_may_speculate=*/true);
}

}  // namespace
}  // namespace lrb
