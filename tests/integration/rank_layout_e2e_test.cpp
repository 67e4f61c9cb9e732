// `lrbench run --ranks auto` starts one rank per core (at most one per run left) under
// mpirun, and a single process with several runs and threads says that layout is faster.
#include <gtest/gtest.h>
#include <fmt/core.h>

#include <filesystem>
#include <string>

#include "suite/core/environment.h"
#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

using test::TempDir;

// tiny_sweep's 4 runs with its threads left to lrbench.
std::string auto_threads_sweep(int steps) {
  std::string spec = test::tiny_sweep(steps);
  spec.replace(spec.find("threads = 1"), 11, "threads = \"auto\"");
  return spec;
}

std::vector<std::string> run_cmd(const TempDir& t, std::vector<std::string> extra) {
  std::vector<std::string> argv = {test::lrbench(), "run", (t / "sweep.toml").string(), "--out", (t / "out").string(),
                                   "--data-cache", "none"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

TEST(MpiRankLayout, RanksAutoStartsOneRankPerCoreUpToTheRunsLeft) {
  TempDir t;
  test::write_text(t / "sweep.toml", auto_threads_sweep(10));
  const int ranks = std::min(available_physical_cores(), 4);
  const int threads = std::max(1, available_cores() / ranks);
  const auto first = test::run(run_cmd(t, {"--ranks", "auto"}));
  ASSERT_EQ(first.code, kExitDone) << first.output;
  EXPECT_NE(first.output.find(fmt::format("--ranks auto: {} rank(s) x {} thread(s)", ranks, threads)), std::string::npos)
      << first.output;
  EXPECT_NE(first.output.find(fmt::format("4 runs to do on {} rank(s)", ranks)), std::string::npos) << first.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& [key, rec] : runs) EXPECT_EQ(rec.provenance.at("threads").get<int>(), threads) << key;
  EXPECT_EQ(first.output.find("note:"), std::string::npos) << "ranks need no advice\n" << first.output;

  // Nothing left: one rank, which finds every run done.
  const auto again = test::run(run_cmd(t, {"--ranks", "auto"}));
  ASSERT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find(fmt::format("--ranks auto: 1 rank(s) x {} thread(s)", available_cores())), std::string::npos)
      << again.output;
  EXPECT_NE(again.output.find("0 run(s) left"), std::string::npos) << again.output;
}

TEST(SlowRankLayout, OneProcessWithThreadsForSeveralRunsSuggestsRanks) {
  TempDir t;
  test::write_text(t / "sweep.toml", auto_threads_sweep(2));
  const auto r = test::run(run_cmd(t, {}));
  ASSERT_EQ(r.code, kExitDone) << r.output;
  const bool several_cores = available_physical_cores() >= 2 && available_cores() >= 2;
  EXPECT_EQ(r.output.find("`--ranks auto` runs them on") != std::string::npos, several_cores) << r.output;
  // Threads of the user's: their choice, no advice (the same runs again, from nothing).
  std::filesystem::remove_all(t / "out");
  const auto fixed = test::run(run_cmd(t, {"--threads", "2"}));
  ASSERT_EQ(fixed.code, kExitDone) << fixed.output;
  EXPECT_NE(fixed.output.find("4 runs to do on 1 rank(s)"), std::string::npos) << fixed.output;
  EXPECT_EQ(fixed.output.find("note:"), std::string::npos) << fixed.output;
}

TEST(SlowRankLayout, ARankCountOutsideItsRangeIsRefused) {
  TempDir t;
  test::write_text(t / "sweep.toml", auto_threads_sweep(2));
  for (const char* bad : {"0", "4097", "two", "2x", "-1", ""}) {
    const auto r = test::run(run_cmd(t, {"--ranks", bad}));
    EXPECT_EQ(r.code, kExitUsage) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--ranks"), std::string::npos) << bad << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(t / "out")) << "nothing ran";
}

TEST(SlowRankLayout, RanksAutoLeavesAGpuSweepToTheUsersCount) {
  TempDir t;
  std::string spec = auto_threads_sweep(2);
  spec.replace(spec.find("[train]"), 7, "device = \"cuda\"\n[train]");
  test::write_text(t / "sweep.toml", spec);
  const auto r = test::run(run_cmd(t, {"--ranks", "auto"}));
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("--ranks auto lays out CPU cores; give --ranks N, one rank per GPU"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(t / "out")) << "nothing ran";
}

}  // namespace
}  // namespace lrb
