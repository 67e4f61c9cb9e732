// Hypothesis tests, adjustments and fits against SciPy / statsmodels vectors.
#include <gtest/gtest.h>

#include "stats_fixture.h"
#include "suite/core/errors.h"
#include "suite/stats/multiple_testing.h"
#include "suite/stats/scaling_fit.h"
#include "suite/stats/t_tests.h"
#include "suite/stats/wilcoxon.h"

namespace lrb::stats {
namespace {

using testing::close;
using testing::fixtures;
using testing::vec;

std::vector<double> minus(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

TEST(StatsTTest, OneSampleMatchesTtest1samp) {
  for (const auto& c : fixtures()["cells"]) {
    const TTest t = t_test_one_sample(vec(c["values"]));
    EXPECT_TRUE(close(t.p_value, c["p_one_sample"].get<double>()));
    EXPECT_TRUE(close(t.ci, c["ci95"]));
  }
}

TEST(StatsTTest, PairedMatchesTtestRel) {
  for (const auto& c : fixtures()["paired_t"]) {
    SCOPED_TRACE(c["a"].dump());
    const TTest t = t_test_one_sample(minus(vec(c["a"]), vec(c["b"])));
    EXPECT_TRUE(close(t.statistic, c["t"].get<double>()));
    EXPECT_TRUE(close(t.p_value, c["p"].get<double>()));
    EXPECT_TRUE(close(t.df, c["df"].get<double>(), 0, 0));
    EXPECT_TRUE(close(t.estimate, c["mean_diff"].get<double>()));
    EXPECT_TRUE(close(t.ci, c["ci95"]));
  }
}

TEST(StatsTTest, WelchMatchesTtestInd) {
  for (const auto& c : fixtures()["welch"]) {
    SCOPED_TRACE(c["a"].dump());
    const TTest t = t_test_welch(vec(c["a"]), vec(c["b"]));
    EXPECT_TRUE(close(t.statistic, c["t"].get<double>()));
    EXPECT_TRUE(close(t.p_value, c["p"].get<double>()));
    EXPECT_TRUE(close(t.df, c["df"].get<double>()));
    EXPECT_TRUE(close(t.estimate, c["mean_diff"].get<double>()));
    EXPECT_TRUE(close(t.ci, c["ci95"]));
  }
}

// Boost's quantile is exact to rounding where closed forms exist; SciPy 1.10's t.ppf is not
// (off by ~2e-11 at df = 1, and up to a few 1e-9 at fractional df), so the fixture script
// polishes it with Newton steps before writing intervals.
TEST(StatsTTest, CriticalValuesAreExact) {
  EXPECT_TRUE(close(t_critical(0.95, 1.0), std::tan(M_PI * 0.475), 1e-15, 0));
  EXPECT_TRUE(close(t_critical(0.95, 2.0), 0.95 / std::sqrt(2 * 0.975 * 0.025), 1e-15, 0));
}

TEST(StatsTTest, DegenerateCasesGiveNoNaN) {
  const TTest one = t_test_one_sample({0.02});
  EXPECT_EQ(one.estimate, 0.02);
  EXPECT_FALSE(one.p_value);
  EXPECT_FALSE(one.ci);
  const TTest same = t_test_one_sample({0.0, 0.0, 0.0});
  EXPECT_EQ(same.p_value, 1.0);
  EXPECT_FALSE(same.statistic);
  const TTest shift = t_test_one_sample({0.01, 0.01, 0.01});
  EXPECT_EQ(shift.p_value, 0.0);
  ASSERT_TRUE(shift.ci);
  EXPECT_EQ(shift.ci->lo, 0.01);
  const TTest w = t_test_welch({1.0, 1.0}, {1.0, 1.0});
  EXPECT_EQ(w.p_value, 1.0);
  EXPECT_FALSE(w.df);
  EXPECT_FALSE(t_test_welch({1.0}, {1.0, 2.0}).p_value);
}

TEST(StatsWilcoxon, MatchesScipy) {
  for (const auto& c : fixtures()["wilcoxon"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const auto d = vec(c["d"]);
    const WilcoxonResult r = wilcoxon_signed_rank(d);
    const bool exact = c["method"] == "exact";
    EXPECT_EQ(r.method_used, exact ? WilcoxonMethod::kExact : WilcoxonMethod::kApprox);
    EXPECT_TRUE(close(r.statistic, c["statistic"].get<double>(), 0, 0));
    EXPECT_TRUE(close(r.p_value, c["p"].get<double>()));
    // SciPy's own method="approx", and where there are no zeros its method="exact" (which is
    // also its "auto" when n <= 50: with ties, the exact table on a truncated R+).
    EXPECT_TRUE(close(wilcoxon_signed_rank(d, WilcoxonMethod::kApprox).p_value, c["p_scipy_approx"].get<double>()));
    if (c.contains("p_scipy_exact")) {
      EXPECT_TRUE(close(wilcoxon_signed_rank(d, WilcoxonMethod::kExact).p_value, c["p_scipy_exact"].get<double>()));
    }
  }
}

TEST(StatsWilcoxon, NullDistributionIsExact) {
  const auto pmf = wilcoxon_null_pmf(3);  // R+ over 8 sign patterns of ranks 1, 2, 3
  const std::vector<double> expected{1, 1, 1, 2, 1, 1, 1};
  ASSERT_EQ(pmf.size(), expected.size());
  for (std::size_t i = 0; i < pmf.size(); ++i) EXPECT_EQ(pmf[i], expected[i] / 8.0);
}

TEST(StatsWilcoxon, AllZeroAndEmpty) {
  EXPECT_EQ(wilcoxon_signed_rank({0.0, 0.0, 0.0}).p_value, 1.0);
  EXPECT_FALSE(wilcoxon_signed_rank({}).p_value);
}

TEST(StatsMultipleTesting, HolmAndBhMatchStatsmodels) {
  for (const auto& c : fixtures()["multipletests"]) {
    SCOPED_TRACE(c["p"].dump());
    const auto p = vec(c["p"]);
    const auto h = holm(p);
    const auto bh = benjamini_hochberg(p);
    const auto eh = vec(c["holm"]);
    const auto ebh = vec(c["fdr_bh"]);
    for (std::size_t i = 0; i < p.size(); ++i) {
      EXPECT_TRUE(close(h[i], eh[i], 1e-12, 1e-15)) << i;
      EXPECT_TRUE(close(bh[i], ebh[i], 1e-12, 1e-15)) << i;
    }
  }
}

TEST(StatsMultipleTesting, UndefinedValuesStayOutOfTheFamily) {
  const std::vector<std::optional<double>> p{0.01, std::nullopt, 0.04};
  const auto h = adjust(p, Correction::kHolm);
  EXPECT_TRUE(close(h[0], 0.02));
  EXPECT_FALSE(h[1]);
  EXPECT_TRUE(close(h[2], 0.04));
  EXPECT_THROW(holm({0.5, 1.5}), UserError);
  EXPECT_TRUE(holm({}).empty());
}

TEST(StatsScalingFit, MatchesLinregress) {
  for (const auto& c : fixtures()["scaling"]) {
    SCOPED_TRACE(c["x"].dump());
    const LineFit f = fit_power_law(vec(c["x"]), vec(c["y"]));
    EXPECT_TRUE(close(f.slope, c["slope"].get<double>()));
    EXPECT_TRUE(close(f.intercept, c["intercept"].get<double>()));
    EXPECT_TRUE(close(f.r_squared, c["r_squared"].get<double>()));
    if (c.contains("slope_ci95")) {
      EXPECT_TRUE(close(f.slope_stderr, c["slope_stderr"].get<double>(), 1e-9, 1e-12));
      EXPECT_TRUE(close(f.slope_ci, c["slope_ci95"]));
    } else {
      EXPECT_FALSE(f.slope_stderr);
      EXPECT_FALSE(f.slope_ci);
    }
  }
}

TEST(StatsScalingFit, ExactPowerLawAndBadInput) {
  const LineFit f = fit_power_law({128, 256, 512, 1024}, {3 * 128.0 * 128, 3 * 256.0 * 256, 3 * 512.0 * 512,
                                                          3 * 1024.0 * 1024});
  EXPECT_NEAR(f.slope, 2.0, 1e-12);
  EXPECT_NEAR(std::exp(f.intercept), 3.0, 1e-9);
  ASSERT_TRUE(f.slope_ci);
  EXPECT_NEAR(f.slope_ci->lo, 2.0, 1e-9);
  EXPECT_NEAR(f.slope_ci->hi, 2.0, 1e-9);
  EXPECT_THROW(fit_power_law({1, 2}, {1, 0}), UserError);
  EXPECT_THROW(fit_power_law({2, 2, 2}, {1, 2, 3}), UserError);
  EXPECT_THROW(fit_power_law({2}, {1}), UserError);
}

}  // namespace
}  // namespace lrb::stats
