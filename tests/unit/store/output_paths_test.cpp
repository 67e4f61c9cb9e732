// Where a command may write what the user names: never a results folder's own entries
// (of the folders it reads, or of any folder holding results), whatever way the path takes.
#include "suite/store/output_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "suite/core/errors.h"
#include "suite/store/results_layout.h"
#include "tests/support/subprocess.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

std::string refusal(const fs::path& path, const std::vector<fs::path>& inputs = {}) {
  try {
    refuse_results_folder_output(path, "-o", inputs);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputPaths, EveryEntryAResultsFolderKeepsIsItsOwn) {
  const ResultsLayout at("");
  for (const fs::path& p : {at.runs(), at.checkpoints(), at.quarantine(), at.slurm(), at.manifest(), at.sweep_file_copy(),
                            at.merged(), at.index(), at.study_log(), at.study_lock(), at.folder_lock(), at.shard_layout_lock(),
                            at.shard_layout(), at.shard_lock(1, 3)})
    EXPECT_NE(ResultsLayout::own_entry(p.filename().string()), "") << p;
  EXPECT_NE(ResultsLayout::own_entry(".report.md.tmp.host.12"), "");
  for (const char* mine : {"report.md", "runs.csv", "sweep.md", "notes"}) EXPECT_EQ(ResultsLayout::own_entry(mine), "") << mine;
}

TEST(OutputPaths, AFolderHoldsResultsByWhatOnlyAResultsFolderHolds) {
  test::TempDir t;
  EXPECT_FALSE(ResultsLayout::holds_results(t.path()));
  fs::create_directories(t / "runs");
  test::write_text(t / "runs" / "events.log", "a tensorboard folder is not one");
  EXPECT_FALSE(ResultsLayout::holds_results(t.path()));
  test::write_text(t / "runs" / "a.h5", "");
  EXPECT_TRUE(ResultsLayout::holds_results(t.path()));
  test::TempDir m;
  test::write_text(ResultsLayout(m.path()).merged(), "");
  EXPECT_TRUE(ResultsLayout::holds_results(m.path()));
}

TEST(OutputPaths, TheFolderOwnEntriesAreRefusedWhicheverWayThePathGoes) {
  test::TempDir t;
  const fs::path dir = t / "res";
  fs::create_directories(dir / "sub");
  test::write_text(ResultsLayout(dir).manifest(), "{}");
  fs::create_symlink(dir, t / "link");
  for (const fs::path& p : {dir / "sweep.h5", dir / "runs" / "x.h5", dir / "runs", dir / "sub" / ".." / "study.json",
                            t / "link" / "sweep.json", dir / "checkpoints" / "new" / "deep.md", dir / ".lock-shard-0-of-2"})
    EXPECT_NE(refusal(p), "") << p;
  EXPECT_NE(refusal(dir / "sweep.h5").find("-o " + (dir / "sweep.h5").string() + " is sweep.h5 of the results folder " +
                                           dir.string() + " (its merged runs"),
            std::string::npos)
      << refusal(dir / "sweep.h5");
  for (const fs::path& p : {dir / "report.md", dir / "sub" / "runs" / "x.md", t / "runs" / "x.md", t / "link" / "report.md"})
    EXPECT_EQ(refusal(p), "") << p;
  // A folder the command reads is a results folder whatever it holds yet.
  fs::create_directories(t / "empty");
  EXPECT_EQ(refusal(t / "empty" / "sweep.h5"), "");
  EXPECT_NE(refusal(t / "empty" / "sweep.h5", {t / "empty"}), "");
}

}  // namespace
}  // namespace lrb
