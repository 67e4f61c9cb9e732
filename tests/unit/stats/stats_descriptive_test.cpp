#include <gtest/gtest.h>

#include "stats_fixture.h"
#include "suite/stats/describe.h"
#include "suite/stats/sample_stats.h"

namespace lrb::stats {
namespace {

using testing::close;
using testing::fixtures;
using testing::vec;

TEST(StatsDescribe, MatchesNumpyAndScipyOnFixtureCells) {
  for (const auto& c : fixtures()["cells"]) {
    SCOPED_TRACE(c["values"].dump());
    const CellSummary s = describe(vec(c["values"]));
    EXPECT_EQ(s.n, c["n"].get<std::size_t>());
    EXPECT_TRUE(close(s.mean, c["mean"]));
    EXPECT_TRUE(close(s.std, c["std"]));
    EXPECT_TRUE(close(s.sem, c["sem"]));
    EXPECT_TRUE(close(s.t_ci, c["ci95"]));
    EXPECT_TRUE(close(s.median, c["median"]));
    EXPECT_TRUE(close(s.q1, c["q1"]));
    EXPECT_TRUE(close(s.q3, c["q3"]));
    EXPECT_TRUE(close(s.iqr, c["iqr"], 1e-9, 1e-15));
    EXPECT_TRUE(close(s.iqm, c["iqm"]));
    EXPECT_TRUE(close(s.min, c["min"], 0, 0));
    EXPECT_TRUE(close(s.max, c["max"], 0, 0));
    ASSERT_TRUE(s.bootstrap.percentile && s.bootstrap.bca);
    EXPECT_EQ(s.bootstrap.resamples, 10000u);
    EXPECT_EQ(s.bootstrap.seed, kDefaultBootstrapSeed);
    // Both bootstrap intervals sit around the mean.
    EXPECT_LE(s.bootstrap.percentile->lo, *s.mean);
    EXPECT_GE(s.bootstrap.percentile->hi, *s.mean);
  }
}

TEST(StatsDescribe, QuantilesMedianTrimMeanMatchNumpy) {
  for (const auto& c : fixtures()["quantiles"]) {
    SCOPED_TRACE(c["values"].dump());
    const auto x = vec(c["values"]);
    const auto qs = vec(c["q"]);
    const auto expected = vec(c["quantile"]);
    for (std::size_t i = 0; i < qs.size(); ++i) EXPECT_TRUE(close(quantile(x, qs[i]), expected[i], 1e-12, 1e-15));
    EXPECT_TRUE(close(median(x), c["median"], 1e-12, 1e-15));
    EXPECT_TRUE(close(trim_mean(x, 0.25), c["trim_mean_25"], 1e-12, 1e-15));
    EXPECT_TRUE(close(trim_mean(x, 0.1), c["trim_mean_10"], 1e-12, 1e-15));
  }
}

TEST(StatsDescribe, SingleValueHasNoInterval) {
  const CellSummary s = describe({0.73});
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.mean, 0.73);
  EXPECT_EQ(s.median, 0.73);
  EXPECT_EQ(s.iqm, 0.73);
  EXPECT_EQ(s.iqr, 0.0);
  EXPECT_FALSE(s.std);
  EXPECT_FALSE(s.sem);
  EXPECT_FALSE(s.t_ci);
  EXPECT_FALSE(s.bootstrap.percentile);
  EXPECT_FALSE(s.bootstrap.bca);
}

TEST(StatsDescribe, EmptyCellHasOnlyN) {
  const CellSummary s = describe({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_FALSE(s.mean);
  EXPECT_FALSE(s.median);
  EXPECT_FALSE(s.t_ci);
  EXPECT_FALSE(s.bootstrap.bca);
}

TEST(StatsDescribe, ZeroVarianceCollapsesWithoutNaN) {
  const CellSummary s = describe({0.5, 0.5, 0.5, 0.5});
  ASSERT_TRUE(s.std && s.t_ci && s.bootstrap.percentile && s.bootstrap.bca);
  EXPECT_EQ(*s.std, 0.0);
  EXPECT_EQ(*s.sem, 0.0);
  EXPECT_EQ(s.t_ci->lo, 0.5);
  EXPECT_EQ(s.t_ci->hi, 0.5);
  EXPECT_EQ(s.bootstrap.percentile->lo, 0.5);
  EXPECT_EQ(s.bootstrap.percentile->hi, 0.5);
  EXPECT_EQ(s.bootstrap.bca->lo, 0.5);
  EXPECT_EQ(s.bootstrap.bca->hi, 0.5);
}

TEST(StatsDescribe, RankAverageMatchesScipyRankdata) {
  // scipy.stats.rankdata([3, 1, 4, 1, 5, 9, 2, 6, 5]) = [4, 1.5, 5, 1.5, 6.5, 9, 3, 8, 6.5]
  const std::vector<double> r = rank_average({3, 1, 4, 1, 5, 9, 2, 6, 5});
  EXPECT_EQ(r, (std::vector<double>{4, 1.5, 5, 1.5, 6.5, 9, 3, 8, 6.5}));
}

}  // namespace
}  // namespace lrb::stats
