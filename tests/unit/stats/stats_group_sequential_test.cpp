// StatsGroupSequential*: the α-spending boundaries behind a sequential study's looks
// (suite/stats/group_sequential.h), against published values and against simulation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "suite/stats/group_sequential.h"
#include "suite/stats/ratio.h"
#include "suite/stats/t_tests.h"

namespace lrb::stats {
namespace {

std::vector<double> equally_spaced(int looks) {
  std::vector<double> t;
  for (int k = 1; k <= looks; ++k) t.push_back(static_cast<double>(k) / looks);
  return t;
}

// Five equally spaced looks, two-sided α = 0.05, Lan–DeMets O'Brien–Fleming-type spending:
// the boundaries R's gsDesign (sfLDOF, test.type = 2) and ldbounds print, to their 3 decimals.
TEST(StatsGroupSequential, MatchesPublishedObrienFlemingBoundaries) {
  const SpendingBoundary b = obrien_fleming_boundary(equally_spaced(5), 0.05);
  const double published[] = {4.877, 3.357, 2.680, 2.290, 2.031};
  ASSERT_EQ(b.z.size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_NEAR(b.z[k], published[k], 6e-4) << "look " << k + 1;
  EXPECT_DOUBLE_EQ(b.spent.back(), 0.05);
  for (int k = 1; k < 5; ++k) {
    EXPECT_LT(b.z[k], b.z[k - 1]);
    EXPECT_GT(b.spent[k], b.spent[k - 1]);
  }
}

TEST(StatsGroupSequential, OneLookIsTheFixedTest) {
  const SpendingBoundary b = obrien_fleming_boundary({1.0}, 0.05);
  EXPECT_NEAR(b.z[0], 1.959964, 1e-5);
  EXPECT_NEAR(b.nominal[0], 0.05, 1e-12);
}

TEST(StatsGroupSequential, CrossingProbabilitiesUnderTheNullSpendExactlyAlpha) {
  for (const auto& fractions : {equally_spaced(5), equally_spaced(12), std::vector<double>{2.0 / 60, 3.0 / 60, 0.5, 1.0}}) {
    const SpendingBoundary b = obrien_fleming_boundary(fractions, 0.05);
    const SequentialCrossings x = sequential_crossings(fractions, b.z, 0.0);
    EXPECT_NEAR(x.power_upper + x.power_lower, 0.05, 1e-6);
    EXPECT_NEAR(x.power_upper, x.power_lower, 1e-9);
    for (std::size_t k = 0; k < fractions.size(); ++k)
      EXPECT_NEAR(x.upper[k] + x.lower[k], b.spent[k] - (k ? b.spent[k - 1] : 0.0), 1e-7) << k;
  }
}

// The boundaries hold their error for Brownian motion observed at the looks (Monte Carlo,
// 200,000 paths): the rate of crossing lies within 4 standard errors of α.
TEST(StatsGroupSequential, SimulatedPathsCrossAtRateAlpha) {
  const std::vector<double> t = equally_spaced(8);
  const SpendingBoundary b = obrien_fleming_boundary(t, 0.05);
  std::mt19937_64 rng(20261202);
  std::normal_distribution<double> z(0.0, 1.0);
  const int paths = 200000;
  int crossed = 0;
  for (int p = 0; p < paths; ++p) {
    double s = 0, prev = 0;
    for (std::size_t k = 0; k < t.size(); ++k) {
      s += z(rng) * std::sqrt(t[k] - prev);
      prev = t[k];
      if (std::fabs(s / std::sqrt(t[k])) >= b.z[k]) {
        ++crossed;
        break;
      }
    }
  }
  const double rate = static_cast<double>(crossed) / paths;
  EXPECT_NEAR(rate, 0.05, 4 * std::sqrt(0.05 * 0.95 / paths));
}

// Under a drift, the design's power is close to the fixed design's at the same maximum
// information (O'Brien–Fleming's shape costs little), and never above it by much.
TEST(StatsGroupSequential, PowerUnderADriftIsNearTheFixedDesigns) {
  const std::vector<double> info = {10, 20, 30, 40, 50, 60};
  std::vector<double> fractions;
  for (double i : info) fractions.push_back(i / 60);
  const SpendingBoundary b = obrien_fleming_boundary(fractions, 0.05);
  const double drift = 0.4;  // effect per seed, in sd
  const SequentialCrossings x = sequential_crossings(info, b.z, drift);
  const double fixed = 0.5 * std::erfc((1.959964 - drift * std::sqrt(60.0)) / std::sqrt(2.0));
  EXPECT_GT(x.power_upper, fixed - 0.03);
  EXPECT_LT(x.power_upper, fixed + 0.005);
  EXPECT_LT(x.power_lower, 1e-6);
}

TEST(StatsGroupSequential, TinyLevelsStillGiveFiniteCriticalValues) {
  EXPECT_TRUE(std::isfinite(t_critical_two_sided(1e-20, 1.0)));
  EXPECT_NEAR(t_critical_two_sided(0.05, 9.0), t_critical(0.95, 9.0), 1e-12);
  EXPECT_GT(t_critical_two_sided(1e-12, 3.0), t_critical_two_sided(1e-6, 3.0));
}

TEST(StatsGroupSequential, LooksMustAdvance) {
  EXPECT_DEATH((void)obrien_fleming_boundary({0.5, 0.5}, 0.05), "fractions must increase");
}

// Fieller's interval is the set of ratios r whose paired differences A − r·B pass the t test:
// at its ends the t statistic equals the critical value.
TEST(StatsFieller, EndsAreWhereTheTStatisticMeetsTheCriticalValue) {
  const std::vector<double> a = {10.2, 11.1, 9.8, 10.6, 10.9, 10.1};
  const std::vector<double> b = {20.0, 21.5, 19.2, 20.4, 21.9, 20.3};
  const double crit = t_critical(0.99, 5.0);
  const auto ci = fieller_paired_ratio(a, b, crit);
  ASSERT_TRUE(ci);
  for (double r : {ci->lo, ci->hi}) {
    std::vector<double> d;
    for (std::size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - r * b[i]);
    const TTest t = t_test_one_sample(d);
    ASSERT_TRUE(t.statistic);
    EXPECT_NEAR(std::fabs(*t.statistic), crit, 1e-6);
  }
  EXPECT_LT(ci->lo, 0.5);
  EXPECT_GT(ci->hi, 0.5);
}

TEST(StatsFieller, ExactValuesGiveThePointAndANoisyDenominatorNoInterval) {
  const auto point = fieller_paired_ratio({3, 3, 3}, {4, 4, 4}, 10.0);
  ASSERT_TRUE(point);
  EXPECT_DOUBLE_EQ(point->lo, 0.75);
  EXPECT_DOUBLE_EQ(point->hi, 0.75);
  EXPECT_FALSE(fieller_paired_ratio({1, 2, 3}, {-1, 0.1, 1}, 4.0));
  EXPECT_FALSE(fieller_paired_ratio({1}, {2}, 4.0));
}

}  // namespace
}  // namespace lrb::stats
