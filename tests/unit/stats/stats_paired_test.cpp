#include <gtest/gtest.h>

#include "stats_fixture.h"
#include "suite/stats/paired.h"

namespace lrb::stats {
namespace {

using testing::close;
using testing::fixtures;
using testing::seed_map;
using testing::vec;

TEST(StatsPaired, FullComparisonMatchesScipy) {
  const auto& c = fixtures()["compare_paired"];
  const PairedComparison r = compare_paired(seed_map(c["a"]), seed_map(c["b"]));
  EXPECT_EQ(r.n_pairs, c["n_pairs"].get<std::size_t>());
  EXPECT_EQ(r.seeds, c["seeds"].get<std::vector<std::int64_t>>());
  EXPECT_EQ(r.only_a, c["only_a"].get<std::vector<std::int64_t>>());
  EXPECT_EQ(r.only_b, c["only_b"].get<std::vector<std::int64_t>>());
  EXPECT_TRUE(close(r.mean_diff, c["mean_diff"].get<double>()));
  EXPECT_TRUE(close(r.sd_diff, c["sd_diff"].get<double>()));
  EXPECT_TRUE(close(r.t.p_value, c["p_ttest"].get<double>()));
  EXPECT_TRUE(close(r.t.ci, c["ci95"]));
  EXPECT_TRUE(close(r.wilcoxon.p_value, c["p_wilcoxon"].get<double>()));
  EXPECT_EQ(r.wilcoxon.method_used, WilcoxonMethod::kApprox);  // a zero difference
  EXPECT_TRUE(close(r.effect_size, c["effect_size"].get<double>()));
  EXPECT_TRUE(close(r.prob_improvement, c["prob_improvement"].get<double>()));
  ASSERT_TRUE(r.bootstrap.percentile && r.bootstrap.bca);
  EXPECT_EQ(r.bootstrap.n, r.n_pairs);
  EXPECT_LT(r.bootstrap.bca->lo, *r.mean_diff);
  EXPECT_GT(r.bootstrap.bca->hi, *r.mean_diff);
}

// Seed effects dominate: the unpaired Welch test cannot see a consistent 0.01 gain that the
// paired test finds.
TEST(StatsPaired, PairingDetectsWhatWelchCannot) {
  const auto& c = fixtures()["paired_vs_unpaired"];
  SeedValues a, b;
  const auto seeds = c["seeds"].get<std::vector<std::int64_t>>();
  const auto va = vec(c["a"]), vb = vec(c["b"]);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    a[seeds[i]] = va[i];
    b[seeds[i]] = vb[i];
  }
  const PairedComparison paired = compare_paired(a, b);
  const TTest unpaired = compare_unpaired(a, b);
  EXPECT_TRUE(close(paired.t.p_value, c["p_paired_t"].get<double>()));
  EXPECT_TRUE(close(unpaired.p_value, c["p_welch"].get<double>()));
  EXPECT_TRUE(close(paired.wilcoxon.p_value, c["p_wilcoxon"].get<double>()));
  EXPECT_LT(*paired.t.p_value, 0.05);
  EXPECT_GT(*unpaired.p_value, 0.05);
  EXPECT_EQ(paired.prob_improvement, 1.0);
  EXPECT_GT(paired.t.ci->lo, 0.0);
  EXPECT_LT(unpaired.ci->lo, 0.0);
}

TEST(StatsPaired, ProbabilityOfImprovementCountsTiesHalfAndFollowsDirection) {
  const SeedValues a{{0, 1.0}, {1, 2.0}, {2, 3.0}, {3, 4.0}};
  const SeedValues b{{0, 0.5}, {1, 2.0}, {2, 3.5}, {3, 3.0}};
  EXPECT_EQ(compare_paired(a, b).prob_improvement, 0.625);  // (2 + ½) / 4
  PairedSettings lower;
  lower.higher_is_better = false;  // e.g. a loss: A improves where it is smaller
  EXPECT_EQ(compare_paired(a, b, lower).prob_improvement, 0.375);
}

TEST(StatsPaired, UnmatchedAndTinyComparisons) {
  const PairedComparison none = compare_paired({{0, 1.0}}, {{1, 1.0}});
  EXPECT_EQ(none.n_pairs, 0u);
  EXPECT_EQ(none.only_a, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(none.only_b, (std::vector<std::int64_t>{1}));
  EXPECT_FALSE(none.mean_diff);
  EXPECT_FALSE(none.t.p_value);
  EXPECT_FALSE(none.wilcoxon.p_value);
  EXPECT_FALSE(none.prob_improvement);

  const PairedComparison one = compare_paired({{0, 0.8}, {1, 0.9}}, {{1, 0.85}});
  EXPECT_EQ(one.n_pairs, 1u);
  EXPECT_TRUE(close(one.mean_diff, 0.05));
  EXPECT_FALSE(one.t.ci);
  EXPECT_FALSE(one.effect_size);
  EXPECT_FALSE(one.bootstrap.bca);

  const PairedComparison same = compare_paired({{0, 0.8}, {1, 0.9}}, {{0, 0.8}, {1, 0.9}});
  EXPECT_EQ(same.t.p_value, 1.0);
  EXPECT_EQ(same.wilcoxon.p_value, 1.0);
  EXPECT_EQ(same.effect_size, 0.0);
  EXPECT_EQ(same.prob_improvement, 0.5);
  EXPECT_EQ(same.bootstrap.bca->lo, 0.0);
}

}  // namespace
}  // namespace lrb::stats
