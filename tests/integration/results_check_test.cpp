// scripts/results_check.sh, the CI's results check: a build whose figures moved fails it
// unless a commit says why ("Moves-results:"), and a passing build becomes the baseline.
// The sides are written run by run (no training); the commits are those of a git work tree
// of the test's own. Suite SlowResultsCheck.
#include <gtest/gtest.h>

#include <filesystem>

#include "suite/core/files.h"
#include "tests/support/report_runs.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

std::vector<RunRecord> runs(double maelre_accuracy, const std::string& blas_core = "Cooperlake") {
  std::vector<RunRecord> out;
  for (const char* model : {"transformer", "maelre"}) {
    test::RunDraft d;
    d.model = model;
    d.provenance = {{"blas_core", blas_core}};
    d.metrics = {{"eval_accuracy", std::string(model) == "maelre" ? maelre_accuracy : 0.61},
                 {"params", 1000},
                 {"step_seconds_median", 0.01 + 0.001 * out.size()}};
    out.push_back(test::make_run(d));
  }
  return out;
}

struct Check {
  const test::TempDir& t;
  test::Result operator()(const fs::path& new_results) const {
    return test::run({"/usr/bin/env", "LRB_RESULTS_BASELINE=" + (t / "baseline").string(),
                      "LRB_RESULTS_NEW=" + new_results.string(), "LRB_RESULTS_REPO=" + (t / "repo").string(),
                      std::string(LRB_SOURCE_DIR) + "/scripts/results_check.sh", fs::path(test::lrbench()).parent_path().string()});
  }
};

void commit(const test::TempDir& t, const std::string& message) {
  const std::string repo = (t / "repo").string();
  const auto r = test::run({"/usr/bin/git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                            "--allow-empty", "-m", message});
  ASSERT_EQ(r.code, 0) << r.output;
}

TEST(SlowResultsCheck, AMovedFigureFailsUnlessACommitSaysWhy) {
  test::TempDir t;
  ASSERT_EQ(test::run({"/usr/bin/git", "init", "-q", (t / "repo").string()}).code, 0);
  commit(t, "first");
  test::write_runs(t / "before", runs(0.70));
  test::write_runs(t / "same", runs(0.70));
  test::write_runs(t / "moved", runs(0.70 + 1e-6));  // one number moved in the last digits
  const Check check{t};
  const auto first = check(t / "before");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("no baseline yet"), std::string::npos) << first.output;
  const auto same = check(t / "same");
  EXPECT_EQ(same.code, 0) << same.output;
  EXPECT_NE(same.output.find("identical"), std::string::npos) << same.output;

  commit(t, "a change that says nothing");
  const auto moved = check(t / "moved");
  EXPECT_EQ(moved.code, 1) << moved.output;
  EXPECT_NE(moved.output.find("maelre eval_accuracy: 0.7 -> 0.700001"), std::string::npos) << moved.output;
  EXPECT_NE(moved.output.find("Moves-results:"), std::string::npos) << moved.output;
  // The baseline stays the last passing build's.
  EXPECT_EQ(check(t / "same").code, 0);

  commit(t, "Kernel sums in another order\n\nMoves-results: MAELRE's accuracy by 1e-6");
  const auto explained = check(t / "moved");
  EXPECT_EQ(explained.code, 0) << explained.output;
  EXPECT_NE(explained.output.find("MAELRE's accuracy by 1e-6"), std::string::npos) << explained.output;
  // ... and the moved results are the baseline now.
  EXPECT_EQ(check(t / "moved").code, 0);
  EXPECT_EQ(check(t / "same").code, 1);

  // Results of another machine's BLAS core: their bits say nothing about the change, so
  // they are recorded as the baseline rather than failed.
  test::write_runs(t / "other-core", runs(0.69, "Haswell"));
  const auto other = check(t / "other-core");
  EXPECT_EQ(other.code, 0) << other.output;
  EXPECT_NE(other.output.find("another machine or libraries (blas_core Cooperlake -> Haswell)"), std::string::npos) << other.output;
}

}  // namespace
}  // namespace lrb
