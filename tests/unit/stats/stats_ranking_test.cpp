#include <gtest/gtest.h>

#include "suite/core/errors.h"
#include "suite/stats/ranking.h"

namespace lrb::stats {
namespace {

// values[s] for seeds 0..n-1
SeedValues seeds(std::vector<double> values) {
  SeedValues m;
  for (std::size_t i = 0; i < values.size(); ++i) m[static_cast<std::int64_t>(i)] = values[i];
  return m;
}

const RankedModel& find(const TaskRanking& r, const std::string& name) {
  for (const auto& m : r.models) {
    if (m.model == name) return m;
  }
  throw std::runtime_error("no model " + name);
}

TEST(StatsRanking, ClearlySeparatedModelsGetTheirOwnGroups) {
  const std::map<std::string, SeedValues> models{
      {"a", seeds({0.90, 0.91, 0.92, 0.905, 0.915})},
      {"b", seeds({0.80, 0.81, 0.82, 0.805, 0.814})},
      {"c", seeds({0.70, 0.71, 0.72, 0.706, 0.713})},
  };
  const TaskRanking r = rank_task("t", models);
  ASSERT_EQ(r.models.size(), 3u);
  EXPECT_EQ(r.models[0].model, "a");
  EXPECT_EQ(r.models[1].model, "b");
  EXPECT_EQ(r.models[2].model, "c");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.models[i].group, i + 1);
    EXPECT_EQ(r.models[i].group_rank, i + 1);
    EXPECT_EQ(r.models[i].rank, static_cast<double>(i + 1));
    EXPECT_TRUE(r.models[i].leader);
  }
  EXPECT_LT(*r.models[1].p_adjusted_vs_leader, 0.05);
}

TEST(StatsRanking, IndistinguishableModelsShareRankOne) {
  const std::map<std::string, SeedValues> models{
      {"a", seeds({0.90, 0.85, 0.93, 0.88, 0.91})},
      {"b", seeds({0.89, 0.87, 0.90, 0.89, 0.90})},  // mean 0.89 vs 0.894: noise
      {"c", seeds({0.60, 0.61, 0.62, 0.60, 0.61})},
  };
  const TaskRanking r = rank_task("t", models);
  EXPECT_EQ(find(r, "a").group, 1u);
  EXPECT_EQ(find(r, "b").group, 1u);
  EXPECT_EQ(find(r, "b").group_rank, 1u);
  EXPECT_FALSE(find(r, "b").leader);
  EXPECT_GT(*find(r, "b").p_adjusted_vs_leader, 0.05);
  EXPECT_EQ(find(r, "c").group, 2u);
  EXPECT_EQ(find(r, "c").group_rank, 3u);  // competition rank: 1, 1, 3
}

TEST(StatsRanking, GroupsStayContiguousInMeanOrder) {
  // b is consistently a little worse than a (significant); c is worse still on average but
  // so noisy that its own test against a is not significant. c must not join a's group
  // past b.
  const std::map<std::string, SeedValues> models{
      {"a", seeds({0.90, 0.80, 0.85, 0.95, 0.70})},
      {"b", seeds({0.89, 0.79, 0.84, 0.94, 0.69})},
      {"c", seeds({0.99, 0.50, 0.95, 0.70, 0.60})},
  };
  ASSERT_GT(*compare_paired(models.at("a"), models.at("c")).t.p_value, 0.05);  // the premise
  const TaskRanking r = rank_task("t", models);
  EXPECT_EQ(r.models[1].model, "b");
  EXPECT_EQ(r.models[2].model, "c");
  EXPECT_EQ(find(r, "a").group, 1u);
  EXPECT_EQ(find(r, "b").group, 2u);
  EXPECT_GE(find(r, "c").group, 2u);
}

TEST(StatsRanking, LowerIsBetterAndTooFewPairs) {
  RankingSettings s;
  s.higher_is_better = false;  // e.g. a loss
  const std::map<std::string, SeedValues> models{
      {"low", seeds({0.10, 0.11, 0.12})},
      {"high", seeds({0.50, 0.51, 0.52})},
      {"lonely", SeedValues{{7, 0.9}}},  // no seed in common with anyone: cannot be told apart
  };
  const TaskRanking r = rank_task("t", models, s);
  EXPECT_EQ(r.models[0].model, "low");
  EXPECT_EQ(find(r, "high").group, 2u);
  EXPECT_EQ(find(r, "lonely").group, 2u);
  EXPECT_EQ(find(r, "lonely").n_pairs_vs_leader, 0u);
  EXPECT_FALSE(find(r, "lonely").p_vs_leader);
  EXPECT_THROW(rank_task("t", {{"x", SeedValues{}}}), UserError);
}

TEST(StatsRanking, AcrossTasksMeanRankAndNormalisedIqm) {
  std::vector<TaskScores> tasks{
      {"t1", {{"a", seeds({0.9, 0.9, 0.9})}, {"b", seeds({0.8, 0.8, 0.8})}, {"c", seeds({0.5, 0.5, 0.5})}}},
      {"t2", {{"a", seeds({0.6, 0.6, 0.6})}, {"b", seeds({0.7, 0.7, 0.7})}, {"c", seeds({0.2, 0.2, 0.2})}}},
      {"t3", {{"a", seeds({0.3, 0.3, 0.3})}, {"b", seeds({0.3, 0.3, 0.3})}, {"c", seeds({0.3, 0.3, 0.3})}}},
  };
  RankingSettings s;
  s.bootstrap.resamples = 500;
  const OverallRanking r = rank_across_tasks(tasks, s);
  ASSERT_EQ(r.models.size(), 3u);
  EXPECT_EQ(r.tasks.size(), 3u);
  EXPECT_EQ(r.normalised_tasks, 2u);  // t3 separates nobody
  // Ranks: t1 a1 b2 c3; t2 b1 a2 c3; t3 all 2 (average).
  EXPECT_EQ(r.models[0].model, "a");
  EXPECT_DOUBLE_EQ(r.models[0].mean_rank, 5.0 / 3.0);
  EXPECT_EQ(r.models[1].model, "b");
  EXPECT_DOUBLE_EQ(r.models[1].mean_rank, 5.0 / 3.0);
  EXPECT_EQ(r.models[2].model, "c");
  EXPECT_DOUBLE_EQ(r.models[2].mean_rank, 8.0 / 3.0);
  // Normalised: t1 a 1, b 0.75, c 0; t2 a 0.8, b 1, c 0. IQM of two values is their mean.
  EXPECT_NEAR(*r.models[0].normalised_iqm, 0.9, 1e-12);
  EXPECT_NEAR(*r.models[1].normalised_iqm, 0.875, 1e-12);
  EXPECT_NEAR(*r.models[2].normalised_iqm, 0.0, 1e-12);
  // No seed variance: every replicate is the same, intervals collapse.
  ASSERT_TRUE(r.models[2].mean_rank_ci);
  EXPECT_DOUBLE_EQ(r.models[2].mean_rank_ci->lo, 8.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.models[2].mean_rank_ci->hi, 8.0 / 3.0);
  EXPECT_EQ(r.resamples, 500u);
  EXPECT_EQ(r.seed, kDefaultBootstrapSeed);
}

TEST(StatsRanking, AcrossTasksIntervalsCoverAndAreReproducible) {
  std::vector<TaskScores> tasks{
      {"t1", {{"a", seeds({0.90, 0.86, 0.93, 0.88})}, {"b", seeds({0.89, 0.88, 0.90, 0.87})}}},
      {"t2", {{"a", seeds({0.70, 0.74, 0.69, 0.71})}, {"b", seeds({0.60, 0.61, 0.66, 0.62})}}},
  };
  RankingSettings s;
  s.bootstrap.resamples = 2000;
  const OverallRanking r1 = rank_across_tasks(tasks, s);
  const OverallRanking r2 = rank_across_tasks(tasks, s);
  for (std::size_t m = 0; m < 2; ++m) {
    const auto& x = r1.models[m];
    ASSERT_TRUE(x.mean_rank_ci && x.normalised_iqm_ci);
    EXPECT_LE(x.mean_rank_ci->lo, x.mean_rank);
    EXPECT_GE(x.mean_rank_ci->hi, x.mean_rank);
    EXPECT_GE(x.mean_rank_ci->lo, 1.0);
    EXPECT_LE(x.mean_rank_ci->hi, 2.0);
    EXPECT_EQ(x.mean_rank_ci->lo, r2.models[m].mean_rank_ci->lo);
    EXPECT_EQ(x.normalised_iqm_ci->hi, r2.models[m].normalised_iqm_ci->hi);
  }
  EXPECT_EQ(r1.models[0].model, "a");
  EXPECT_LT(r1.models[0].mean_rank_ci->lo, r1.models[0].mean_rank_ci->hi);  // t1 flips in some replicates
}

TEST(StatsRanking, AcrossTasksNeedsEveryModelEverywhere) {
  std::vector<TaskScores> tasks{
      {"t1", {{"a", seeds({0.9})}, {"b", seeds({0.8})}}},
      {"t2", {{"a", seeds({0.9})}}},
  };
  EXPECT_THROW(rank_across_tasks(tasks), UserError);
  EXPECT_THROW(rank_across_tasks({}), UserError);
}

}  // namespace
}  // namespace lrb::stats
