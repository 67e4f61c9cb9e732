// One type owns the results folder's layout: its paths, and no other file spelling them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "suite/store/results_layout.h"

namespace lrb {
namespace {

namespace fs = std::filesystem;

TEST(ResultsLayout, NamesEveryPlaceInTheFolder) {
  const ResultsLayout at("/data/res");
  EXPECT_EQ(at.run_file("abc"), fs::path("/data/res/runs/abc.h5"));
  EXPECT_EQ(at.checkpoint("abc"), fs::path("/data/res/checkpoints/abc.pt"));
  EXPECT_EQ(at.quarantine(), fs::path("/data/res/quarantine"));
  EXPECT_EQ(at.manifest(), fs::path("/data/res/sweep.json"));
  EXPECT_EQ(at.sweep_file_copy(), fs::path("/data/res/sweep.toml"));
  EXPECT_EQ(at.merged(), fs::path("/data/res/sweep.h5"));
  EXPECT_EQ(at.slurm(), fs::path("/data/res/slurm"));
  EXPECT_EQ(at.shard_lock(1, 3), fs::path("/data/res/.lock-shard-1-of-3"));
  EXPECT_TRUE(ResultsLayout::in_runs_folder(at.run_file("abc")));
  EXPECT_FALSE(ResultsLayout::in_runs_folder(at.checkpoint("abc")));
  EXPECT_FALSE(ResultsLayout::in_runs_folder("/data/res/abc.h5"));
  const auto temps = at.folders_with_temporaries();
  EXPECT_EQ(temps, (std::vector<fs::path>{at.runs(), at.checkpoints(), at.quarantine()}));
}

// A path into the results folder built anywhere else (`dir / "runs"`, "{}/sweep.json") would
// be a second spelling of the layout.
TEST(ResultsLayout, NoOtherSourceFileSpellsThePaths) {
  const std::regex spelled(R"((/\s*"|\{\}/)(runs|checkpoints|quarantine|slurm|sweep\.json|sweep\.h5|sweep\.toml|\.lock[-a-z]*|\.shard-layout)\b)");
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(LRB_SOURCE_DIR) / "suite")) {
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".h") continue;
    if (entry.path().filename() == "results_layout.h") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto code = line.substr(0, line.find("//"));
      if (std::regex_search(code, spelled)) found.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  std::ostringstream all;
  for (const auto& f : found) all << f << "\n";
  EXPECT_TRUE(found.empty()) << "paths into the results folder spelled outside results_layout.h:\n" << all.str();
}

}  // namespace
}  // namespace lrb
