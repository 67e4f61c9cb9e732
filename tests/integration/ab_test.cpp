// `lrbench ab`: a sweep run by two builds, interleaved cell by cell, then compared. The
// "two builds" are this build and small shell wrappers around it (another program, so
// another digest; or one that lists other runs). Suite SlowAb.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "suite/core/exit_codes.h"
#include "tests/support/results.h"
#include "tests/support/subprocess.h"
#include "tests/support/sweeps.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A build in name only: a script that hands every command to this build, except `validate`,
// whose listing `edit` (a sed program) may change. Each name gives another program.
fs::path wrapper(const test::TempDir& t, const std::string& name, const std::string& edit = "") {
  const fs::path p = t / name;
  std::ofstream out(p);
  out << "#!/bin/sh\n# " << name << "\n";  // each wrapper a program of its own digest
  if (!edit.empty()) out << "if [ \"$1\" = validate ]; then \"" << test::lrbench() << "\" \"$@\" | sed '" << edit << "'; exit 0; fi\n";
  out << "exec \"" << test::lrbench() << "\" \"$@\"\n";
  out.close();
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

std::vector<std::string> ab_cmd(const test::TempDir& t, const std::string& baseline, const std::string& candidate,
                                const std::string& out = "ab") {
  return {test::lrbench(), "ab", (t / "sweep.toml").string(), "--baseline", baseline, "--candidate", candidate,
          "--out", (t / out).string(), "--data-cache", "none"};
}

TEST(SlowAb, TheSameBuildTwiceIsIdenticalInterleavedCellByCell) {
  test::TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  const fs::path build = fs::path(test::lrbench()).parent_path();
  auto cmd = ab_cmd(t, build.string(), test::lrbench());
  cmd.insert(cmd.end(), {"-o", (t / "ab.json").string(), "--fail-on", "regressed"});
  const auto r = test::run(cmd);
  ASSERT_EQ(r.code, kExitDone) << r.output;
  // Cell 1: baseline then candidate; cell 2: candidate then baseline.
  const auto at = [&](const std::string& s) { return r.output.find(s); };
  ASSERT_NE(at("cell 1/2: the baseline"), std::string::npos) << r.output;
  EXPECT_LT(at("cell 1/2: the baseline"), at("cell 1/2: the candidate")) << r.output;
  EXPECT_LT(at("cell 2/2: the candidate"), at("cell 2/2: the baseline")) << r.output;
  EXPECT_EQ(test::read_runs(t / "ab" / "baseline").size(), 4u);
  EXPECT_EQ(test::read_runs(t / "ab" / "candidate").size(), 4u);
  const auto report = nlohmann::json::parse(test::read_text(t / "ab.json"));
  EXPECT_EQ(report.at("paired_runs"), 4);
  EXPECT_EQ(report.at("summary").at("regressed"), 0);
  // On a CPU a seed's training is deterministic: every figure but time is bit for bit the same.
  for (const auto& c : report.at("changes")) {
    if (c.at("kind") == "time" || c.at("figure") == "flop_utilisation") continue;
    EXPECT_EQ(c.at("change"), "identical") << c.dump();
  }
}

TEST(SlowAb, RefusesWhatCannotBePaired) {
  test::TempDir t;
  test::write_text(t / "sweep.toml", test::tiny_sweep());
  const auto not_lrbench = test::run(ab_cmd(t, "/bin/true", test::lrbench()));
  EXPECT_EQ(not_lrbench.code, kExitUsage) << not_lrbench.output;
  EXPECT_NE(not_lrbench.output.find("is not an lrbench build"), std::string::npos) << not_lrbench.output;
  // A build whose sweep has other runs (here: its first run listed away).
  const auto other = test::run(ab_cmd(t, test::lrbench(), wrapper(t, "other-runs", "2d").string()));
  EXPECT_EQ(other.code, kExitUsage) << other.output;
  EXPECT_NE(other.output.find("different runs: run 1 is"), std::string::npos) << other.output;
  EXPECT_FALSE(fs::exists(t / "ab" / "baseline"));
  // A sequential study's waves decide its runs: not one cell at a time.
  test::write_text(t / "sweep.toml", test::tiny_sequential_sweep());
  const auto sequential = test::run(ab_cmd(t, test::lrbench(), test::lrbench()));
  EXPECT_EQ(sequential.code, kExitUsage) << sequential.output;
}

TEST(SlowAb, AStopResumesWithTheSameBuildsOnly) {
  test::TempDir t;
  std::string spec = test::tiny_sweep(3000, "checkpoint_every = 25\n");
  spec.replace(spec.find("seeds = 2"), 9, "seeds = [0]");
  test::write_text(t / "sweep.toml", spec);
  const fs::path candidate = wrapper(t, "candidate");
  test::Child ab(ab_cmd(t, test::lrbench(), candidate.string()));
  ASSERT_TRUE(test::wait_for_checkpoint(t / "ab" / "baseline", 120s)) << ab.output();
  ab.signal(SIGTERM);
  ASSERT_EQ(ab.wait(120s), kExitStopped) << ab.output();
  EXPECT_NE(ab.output().find("run the same command again to resume"), std::string::npos) << ab.output();
  // Another candidate program than the one it began with: refused, nothing run.
  const auto rebuilt = test::run(ab_cmd(t, test::lrbench(), wrapper(t, "rebuilt").string()));
  EXPECT_EQ(rebuilt.code, kExitUsage) << rebuilt.output;
  EXPECT_NE(rebuilt.output.find("was begun with another candidate build"), std::string::npos) << rebuilt.output;
  const auto resumed = test::run(ab_cmd(t, test::lrbench(), candidate.string()));
  ASSERT_EQ(resumed.code, kExitDone) << resumed.output;
  EXPECT_EQ(test::read_runs(t / "ab" / "candidate").size(), 2u);
}

}  // namespace
}  // namespace lrb
