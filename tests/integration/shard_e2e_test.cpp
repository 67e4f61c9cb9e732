// `lrbench run --shard I/N` without Slurm: the shards of a sweep, run one after the other
// into one folder, hold every run once, resume on their own, and end bit-identical to the
// whole sweep run at once. Suite Slow* (label slow).
#include <gtest/gtest.h>

#include "suite/config/shard.h"
#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

using test::TempDir;

std::vector<std::string> run_cmd(const TempDir& t, const std::string& out, const std::string& shard = "") {
  std::vector<std::string> argv = {test::lrbench(), "run", (t / "sweep.toml").string(), "--out", (t / out).string()};
  if (!shard.empty()) {
    argv.push_back("--shard");
    argv.push_back(shard);
  }
  return argv;
}

TEST(SlowShard, ShardsHoldEveryRunOnceResumeAndMatchTheWholeSweep) {
  TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep(10));
  auto whole = test::run(run_cmd(t, "whole"));
  ASSERT_EQ(whole.code, kExitDone) << whole.output;

  const auto reference = test::read_runs(t / "whole");
  ASSERT_EQ(reference.size(), 4u);
  std::size_t in_first = 0;
  for (const auto& [key, rec] : reference) in_first += shard_of(key, 2) == 0;
  // Shard 0 alone: exactly its own runs.
  auto first = test::run(run_cmd(t, "out", "0/2"));
  ASSERT_EQ(first.code, kExitDone) << first.output;
  EXPECT_NE(first.output.find("shard 0/2: " + std::to_string(in_first) + " of the sweep's 4 runs"), std::string::npos)
      << first.output;
  auto partial = test::read_runs(t / "out");
  EXPECT_EQ(partial.size(), in_first);
  for (const auto& [key, rec] : partial) EXPECT_EQ(shard_of(key, 2), 0) << key;
  auto second = test::run(run_cmd(t, "out", "1/2"));
  ASSERT_EQ(second.code, kExitDone) << second.output;
  EXPECT_NE(second.output.find("shard 1/2: " + std::to_string(4 - in_first) + " of the sweep's 4 runs"), std::string::npos)
      << second.output;
  const auto runs = test::read_runs(t / "out");
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& [key, rec] : runs) {
    EXPECT_EQ(rec.provenance.at("shard"), std::to_string(shard_of(key, 2)) + "/2");
    EXPECT_EQ(rec.provenance.at("attempt"), 1) << "no run ran twice";
    ASSERT_TRUE(reference.count(key));
    EXPECT_EQ(test::deterministic_difference(reference.at(key), rec), "") << key;
  }

  auto again = test::run(run_cmd(t, "out", "1/2"));
  EXPECT_EQ(again.code, kExitDone) << again.output;
  EXPECT_NE(again.output.find("0 ran now"), std::string::npos) << again.output;
  auto status = test::run({test::lrbench(), "status", (t / "out").string(), "--spec", (t / "sweep.toml").string()});
  EXPECT_EQ(status.code, kExitDone);
  EXPECT_EQ(status.output, "total=4 finished=4 ok=4 failed=0 stopped=0 steps=0 missing=0 remaining=0\n");
  auto bad = test::run(run_cmd(t, "out", "2/2"));
  EXPECT_EQ(bad.code, kExitUsage) << bad.output;
  EXPECT_NE(bad.output.find("shards are numbered 0..1"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace lrb
