// Checkpoints are verified before use: a damaged, truncated or empty one is set aside with
// its reason, the run restarts from step 0 (recorded in its provenance) and ends exactly as
// a run never stopped.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "suite/config/expand.h"
#include "suite/config/sweep_spec.h"
#include "suite/core/files.h"
#include "suite/core/stop_flag.h"
#include "suite/run/data_cache.h"
#include "suite/run/runner.h"
#include "suite/runtime/counting_allocator.h"
#include "suite/store/results_layout.h"
#include "tests/support/damage.h"
#include "tests/support/results.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

class CheckpointIntegrity : public ::testing::Test {
 protected:
  void SetUp() override {
    CpuMemoryCounter::install();
    clear_stop_request();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / (std::string("lrb_ckpt_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    std::string sweep = test::tiny_sweep(20);
    sweep.replace(sweep.find("seeds = 2"), 9, "seeds = [1]");
    sweep.replace(sweep.find("[\"softmax\", \"linear\"]"), 21, "\"softmax\"");
    ex_ = expand_sweep(parse_sweep(sweep, "ckpt.toml"));
    ASSERT_EQ(ex_.runs.size(), 1u);
  }
  void TearDown() override {
    clear_stop_request();
    clear_task_data_cache();
    fs::remove_all(dir_);
  }
  RunOutcome run_in(const fs::path& dir) {
    RunContext ctx;
    ctx.results_dir = dir;
    ctx.threads = 1;
    return execute_run(ex_.runs[0], ctx);
  }
  // A run stopped before its first step leaves a checkpoint; `damage` is done to it; the run
  // then resumes. Its result must be the reference's, with the discarded checkpoint noted.
  void expect_restart_from_scratch(const std::function<void(const fs::path&)>& damage, const std::string& reason) {
    const RunOutcome reference = run_in(dir_ / "reference");
    ASSERT_EQ(reference.status, RunStatus::Ok) << reference.error;

    request_stop(SIGTERM);
    const RunOutcome stopped = run_in(dir_ / "out");
    clear_stop_request();
    ASSERT_EQ(stopped.status, RunStatus::Stopped) << stopped.error;
    const fs::path ckpt = ResultsLayout(dir_ / "out").checkpoint(ex_.runs[0].key);
    ASSERT_TRUE(fs::exists(ckpt)) << stopped.error;
    damage(ckpt);

    const RunOutcome resumed = run_in(dir_ / "out");
    ASSERT_EQ(resumed.status, RunStatus::Ok) << resumed.error;
    EXPECT_EQ(test::deterministic_difference(reference.record, resumed.record), "");
    EXPECT_EQ(resumed.record.metrics.at("steps_done"), 20);
    EXPECT_EQ(resumed.record.provenance.at("attempt"), 1);  // a fresh start, not a resume
    EXPECT_FALSE(resumed.record.provenance.contains("resumed_from_step"));
    ASSERT_TRUE(resumed.record.provenance.contains("checkpoint_discarded")) << resumed.record.provenance.dump();
    const auto& note = resumed.record.provenance.at("checkpoint_discarded");
    EXPECT_NE(note.at("reason").get<std::string>().find(reason), std::string::npos) << note.dump();
    // Set aside with its reason, not deleted; the finished run leaves no checkpoint.
    const fs::path moved = note.at("moved_to").get<std::string>();
    EXPECT_EQ(moved.parent_path(), dir_ / "out" / "quarantine");
    EXPECT_TRUE(fs::exists(moved));
    EXPECT_NE(read_file(moved.string() + ".reason").find(reason), std::string::npos);
    EXPECT_FALSE(fs::exists(ckpt));
  }

  fs::path dir_;
  ExpandedSweep ex_;
};

TEST_F(CheckpointIntegrity, FlippedByteRestartsTheRun) {
  expect_restart_from_scratch([](const fs::path& p) { test::flip_byte(p, fs::file_size(p) / 2, 0x10); },
                              "checksum error");
}

TEST_F(CheckpointIntegrity, TruncatedCheckpointRestartsTheRun) {
  expect_restart_from_scratch([](const fs::path& p) { fs::resize_file(p, fs::file_size(p) - 100); }, "truncated");
}

TEST_F(CheckpointIntegrity, EmptyCheckpointRestartsTheRun) {
  expect_restart_from_scratch([](const fs::path& p) { fs::resize_file(p, 0); }, "empty file");
}

TEST_F(CheckpointIntegrity, AnotherRunsCheckpointRestartsTheRun) {
  // Sealed and intact, but written for another run: copied or renamed by hand.
  expect_restart_from_scratch(
      [&](const fs::path& p) {
        std::string other = test::tiny_sweep(20);
        other.replace(other.find("seeds = 2"), 9, "seeds = [0]");
        other.replace(other.find("[\"softmax\", \"linear\"]"), 21, "\"softmax\"");
        const ExpandedSweep ex = expand_sweep(parse_sweep(other, "other.toml"));
        request_stop(SIGTERM);
        RunContext ctx;
        ctx.results_dir = dir_ / "other";
        ctx.threads = 1;
        ASSERT_EQ(execute_run(ex.runs[0], ctx).status, RunStatus::Stopped);
        clear_stop_request();
        fs::copy_file(ResultsLayout(dir_ / "other").checkpoint(ex.runs[0].key), p, fs::copy_options::overwrite_existing);
      },
      "written for another run");
}

// A resume changes no figure that the data decides: the data's bytes are counted from its
// tensors, whether it was generated, read from the cache or shared in memory.
TEST_F(CheckpointIntegrity, ResumedRunRecordsTheSameDataBytes) {
  const RunOutcome reference = run_in(dir_ / "reference");
  ASSERT_EQ(reference.status, RunStatus::Ok) << reference.error;
  request_stop(SIGTERM);
  ASSERT_EQ(run_in(dir_ / "out").status, RunStatus::Stopped);
  clear_stop_request();
  const RunOutcome resumed = run_in(dir_ / "out");
  ASSERT_EQ(resumed.status, RunStatus::Ok) << resumed.error;
  EXPECT_EQ(resumed.record.provenance.at("attempt"), 2);
  EXPECT_GT(reference.record.metrics.at("data_bytes"), 0);
  EXPECT_EQ(reference.record.metrics.at("data_bytes"), resumed.record.metrics.at("data_bytes"));
}

}  // namespace
}  // namespace lrb
