// StatsSequentialOutlook: what a sequential design will still do, by running its judge over
// simulated seeds (suite/stats/sequential_outlook.h): exact at a few seeds where the normal
// approximation is not, the normal integration's answer at many, and going on from where a
// study stands.
#include <gtest/gtest.h>

#include <cmath>

#include "suite/stats/group_sequential.h"
#include "suite/stats/power.h"
#include "suite/stats/sequential_outlook.h"

namespace lrb::stats {
namespace {

// Two seeds with mean `mean` and sample sd 1.
std::vector<double> pilot(double mean) { return {mean - std::sqrt(0.5), mean + std::sqrt(0.5)}; }

std::vector<double> nominal_levels(const std::vector<std::int64_t>& looks, double alpha) {
  std::vector<double> t;
  for (auto n : looks) t.push_back(static_cast<double>(n) / static_cast<double>(looks.back()));
  return obrien_fleming_boundary(t, alpha).nominal;
}

// One look at 5 seeds, d = 1, α = 0.05: the paired t test's power is 0.401 (statsmodels'
// TTestPower, scipy's nct; paired_t_power is checked against them); Z's is 0.609.
TEST(StatsSequentialOutlook, AtAFewSeedsItIsTheTTestsPowerNotTheNormalApproximations) {
  const SequentialOutlook o = sequential_outlook(pilot(1.0), {5}, {0.05}, /*from_start=*/true);
  EXPECT_NEAR(paired_t_power(1.0, 5, 0.05), 0.4014, 5e-4);
  EXPECT_NEAR(o.power, 0.4014, 0.012) << "20,000 studies: standard error 0.0035";
  EXPECT_NEAR(o.expected_seeds, 5.0, 1e-12) << "one look: every study ends at 5 seeds";
  const SequentialCrossings z = sequential_crossings({5.0}, {1.959964}, 1.0);
  EXPECT_NEAR(z.power_upper, 0.6088, 1e-3);
  EXPECT_GT(z.power_upper - o.power, 0.15) << "what planning on Z overstated";
}

// At 20 seeds a look and more, t is nearly Z: the simulation agrees with the numerical
// integration of the boundaries' crossing probabilities (an independent computation).
TEST(StatsSequentialOutlook, AtManySeedsItAgreesWithTheNormalIntegration) {
  const std::vector<std::int64_t> looks{40, 80, 120, 160};
  const std::vector<double> nominal = nominal_levels(looks, 0.05);
  const SequentialOutlook o = sequential_outlook(pilot(0.2), looks, nominal, true);
  std::vector<double> info, z;
  const SpendingBoundary b = obrien_fleming_boundary({0.25, 0.5, 0.75, 1.0}, 0.05);
  for (auto n : looks) info.push_back(static_cast<double>(n));
  const SequentialCrossings x = sequential_crossings(info, b.z, 0.2);
  double expected = 0, stopped = 0;
  for (std::size_t k = 0; k < looks.size(); ++k) {
    expected += (x.upper[k] + x.lower[k]) * static_cast<double>(looks[k]);
    stopped += x.upper[k] + x.lower[k];
  }
  expected += (1 - stopped) * 160.0;
  EXPECT_NEAR(o.power, x.power_upper, 0.025);
  EXPECT_NEAR(o.expected_seeds, expected, 3.0);
}

// A study open at its second look goes on from its own 20 seeds: it needs at least its next
// look's 30 (planning from look 1 could expect fewer seeds than it already has).
TEST(StatsSequentialOutlook, AStudyGoesOnFromWhereItStands) {
  const std::vector<std::int64_t> looks{10, 20, 30, 40};
  const std::vector<double> nominal = nominal_levels(looks, 0.05);
  std::vector<double> own;
  for (int i = 0; i < 20; ++i) own.push_back(0.35 + (i % 2 ? 1.0 : -1.0) * (1.0 + 0.01 * i));  // t ≈ 1.5: open
  const SequentialOutlook here = sequential_outlook(own, looks, nominal, false);
  EXPECT_GE(here.expected_seeds, 30.0);
  EXPECT_LE(here.expected_seeds, 40.0);
  const SequentialOutlook fresh = sequential_outlook(own, looks, nominal, true);
  EXPECT_GE(fresh.expected_seeds, 10.0) << "a new study may stop at 10 or 20";
  EXPECT_LE(fresh.expected_seeds, 40.0);
  // Past its last look nothing is left to spend.
  std::vector<double> at_max = own;
  at_max.resize(40, 0.35);
  at_max[39] = 1.0;
  EXPECT_EQ(sequential_outlook(at_max, looks, nominal, false).expected_seeds, 40.0);
  // The same inputs give the same numbers.
  const SequentialOutlook again = sequential_outlook(own, looks, nominal, false);
  EXPECT_EQ(again.expected_seeds, here.expected_seeds);
  EXPECT_EQ(again.power, here.power);
}

}  // namespace
}  // namespace lrb::stats
