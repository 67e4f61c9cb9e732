// RunView: a run's spec read once into typed fields (suite/store/run_view.h), and
// RunRecord::view() building it once, from any thread.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "suite/store/run_record.h"
#include "suite/store/run_view.h"
#include "tests/support/report_runs.h"

namespace lrb {
namespace {

TEST(RunView, ReadsEveryFieldOfASpec) {
  test::RunDraft d;
  d.task = "listops";
  d.seq_len = 128;
  d.model = "linear";
  d.seed = 4;
  d.base_seed = 9;
  d.ranks_per_run = 2;
  d.train = {{"flops", 2e12}, {"target", {{"metric", "eval_accuracy"}, {"value", 0.7}}}};
  const RunRecord r = test::make_run(d);
  const RunView& v = r.view();
  EXPECT_EQ(v.task, "listops");
  EXPECT_EQ(v.model, "linear");
  EXPECT_EQ(v.seq_len, 128);
  EXPECT_EQ(v.seed_index, 4);
  EXPECT_EQ(v.replicate, 4);
  EXPECT_EQ(v.named_streams, "seed");
  EXPECT_EQ(v.seed_label, "seed 4");
  EXPECT_EQ(v.base_seed, 9u);
  EXPECT_EQ(v.ranks_per_run, 2);
  EXPECT_EQ(v.device, "cpu");
  EXPECT_EQ(v.batch_size, 8);
  EXPECT_EQ(v.flops_budget, 2e12);
  EXPECT_EQ(v.target.at("value"), 0.7);
  EXPECT_FALSE(v.time_budget);
  EXPECT_TRUE(v.evaluate.is_null());
  EXPECT_TRUE(v.has_settings);
  EXPECT_TRUE(v.match.is_null());
}

TEST(RunView, NamedStreamsAndTheirTuple) {
  test::RunDraft d;
  d.seed = 1;
  d.streams = {{"data", 0}, {"init", 2}};
  const RunRecord r = test::make_run(d);
  const RunView& v = r.view();
  EXPECT_EQ(v.named_streams, "data+init");
  EXPECT_EQ(v.seed_label, "seed 1 data 0 init 2");
  EXPECT_GE(v.replicate, std::int64_t{1} << 62);
}

TEST(RunView, ASpecThatLacksFieldsKeepsTheDefaults) {
  for (const nlohmann::json& spec : {nlohmann::json(), nlohmann::json::array(), nlohmann::json{{"task", 3}, {"seed_index", "x"}}}) {
    const RunView v = RunView::of(spec);
    EXPECT_EQ(v.task, "");
    EXPECT_FALSE(v.seed_index);
    EXPECT_EQ(v.seed_label, "seed ?");
    EXPECT_EQ(v.ranks_per_run, 1);
    EXPECT_FALSE(v.base_seed);
  }
}

TEST(RunView, ARecordReadsItsSpecOnceWhicheverThreadAsksFirst) {
  const RunRecord r = test::make_run(test::RunDraft{});
  std::vector<const RunView*> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = &r.view(); });
  for (auto& t : threads) t.join();
  for (const RunView* v : seen) EXPECT_EQ(v, seen.front());
  EXPECT_EQ(&r.view(), seen.front());
  const RunRecord copy = r;  // a copy shares the reading of the same spec
  EXPECT_EQ(&copy.view(), seen.front());
}

}  // namespace
}  // namespace lrb
