// RunSelection: which runs of a sweep a process runs (--shard, --only).
#include <gtest/gtest.h>

#include "suite/core/errors.h"
#include "suite/sweep/run_selection.h"

namespace lrb {
namespace {

std::vector<RunSpec> runs_with_keys(const std::vector<std::string>& keys) {
  std::vector<RunSpec> out;
  for (const auto& k : keys) {
    RunSpec r;
    r.key = k + std::string(64 - k.size(), '0');
    out.push_back(r);
  }
  return out;
}

TEST(RunSelection, OnlyNamesRunsByKeyOrAUniquePrefix) {
  const auto runs = runs_with_keys({"aaaaaaaa1", "aaaaaaaa2", "bbbbbbbb", "cccccccc"});
  EXPECT_EQ(selected_runs(runs, Shard{}, {}, false), (std::vector<std::size_t>{0, 1, 2, 3}));
  // In the sweep's order, each once, whatever the order given.
  EXPECT_EQ(selected_runs(runs, Shard{}, {"cccccccc", runs[1].key, "cccccccc0"}, false), (std::vector<std::size_t>{1, 3}));
  EXPECT_THROW(selected_runs(runs, Shard{}, {"aaaaaaaa"}, false), UserError);   // two runs start so
  EXPECT_THROW(selected_runs(runs, Shard{}, {"dddddddd"}, false), UserError);   // none does
  EXPECT_THROW(selected_runs(runs, Shard{}, {"bbbb"}, false), UserError);       // too short
  EXPECT_THROW(selected_runs(runs, Shard{}, {"BBBBBBBB"}, false), UserError);   // not a key's digits
  EXPECT_THROW(selected_runs(runs, Shard{}, {"bbbbbbbb"}, true), UserError);    // a sequential study
  // With a shard too: only the named runs of that shard.
  const Shard half{shard_of(runs[2].key, 2), 2};
  for (const std::size_t i : selected_runs(runs, half, {"bbbbbbbb", "cccccccc"}, false)) EXPECT_TRUE(in_shard(runs[i].key, half));
}

}  // namespace
}  // namespace lrb
