// StatsSequentialT: a sequential t-test's boundaries keep its error rate at α when the
// variance is estimated at each look (suite/stats/sequential_t.h). Checked by an
// independent simulation: other generators, every observation drawn, t computed directly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "suite/stats/group_sequential.h"
#include "suite/stats/sequential_t.h"

namespace lrb::stats {
namespace {

struct Rates {
  double upper = 0, any = 0;
};

// The share of `studies` null studies (paired differences ~ N(0, 1)) whose |t| first reaches
// `critical` at some look, and of those that reach it upwards.
Rates null_crossings(const std::vector<std::size_t>& sizes, const std::vector<double>& critical, std::size_t studies) {
  std::mt19937 bits(20261207);
  std::normal_distribution<double> normal;
  double upper = 0, any = 0;
  for (std::size_t s = 0; s < studies; ++s) {
    double sum = 0, sumsq = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      for (; n < sizes[k]; ++n) {
        const double v = normal(bits);
        sum += v;
        sumsq += v * v;
      }
      const double nn = static_cast<double>(n), mean = sum / nn;
      const double sd = std::sqrt((sumsq - nn * mean * mean) / (nn - 1.0));
      const double t = mean / (sd / std::sqrt(nn));
      if (std::fabs(t) >= critical[k]) {
        any += 1;
        upper += t > 0;
        break;
      }
    }
  }
  return {upper / static_cast<double>(studies), any / static_cast<double>(studies)};
}

std::vector<std::size_t> looks(std::size_t first, std::size_t step, std::size_t max) {
  std::vector<std::size_t> n;
  for (std::size_t k = first; k < max; k += step) n.push_back(k);
  n.push_back(max);
  return n;
}

SpendingBoundary spending(const std::vector<std::size_t>& sizes, double alpha) {
  std::vector<double> fractions;
  for (auto n : sizes) fractions.push_back(static_cast<double>(n) / static_cast<double>(sizes.back()));
  return obrien_fleming_boundary(fractions, alpha);
}

// The designs (seeds = {first, step, max}), α = 0.05: the boundaries read off the
// known-variance levels cross 0.0274 a side for {2, 1, 20}; these keep α/2 a side, within
// the two simulations' errors (this one's 1,000,000 studies, the boundaries' 2^20).
TEST(StatsSequentialT, TheErrorRateIsAlphaWhenTheVarianceIsEstimated) {
  constexpr double alpha = 0.05;
  constexpr std::size_t studies = 1000000;
  for (const auto& sizes : {looks(2, 1, 20), looks(5, 5, 60), looks(3, 3, 9)}) {
    const SpendingBoundary z = spending(sizes, alpha);
    const SequentialTBoundary b = sequential_t_boundary(sizes, z.spent);
    ASSERT_EQ(b.t.size(), sizes.size());
    EXPECT_NEAR(b.t[0], t_critical_two_sided(z.spent[0], static_cast<double>(sizes[0]) - 1.0), 1e-6 * b.t[0])
        << "the first look is Student's exact quantile";
    const Rates r = null_crossings(sizes, b.t, studies);
    std::printf("%zu looks to %zu: two-sided %.5f, upper %.5f\n", sizes.size(), sizes.back(), r.any, r.upper);
    const double se_any = std::sqrt(alpha * (1 - alpha) / studies + alpha / 1048576.0);
    const double se_side = std::sqrt(alpha / 2 / studies + alpha / 2 / 1048576.0);
    EXPECT_NEAR(r.any, alpha, 4 * se_any) << sizes.size() << " looks to " << sizes.back();
    EXPECT_LT(r.upper, alpha / 2 + 4 * se_side) << "one side keeps α/2: " << sizes.size() << " looks to " << sizes.back();
    EXPECT_GT(r.upper, alpha / 2 - 4 * se_side) << "and spends it";
  }
}

// The substitution it replaces (Student's t at the known-variance boundary's nominal level)
// is measurably anti-conservative on the same simulation: the test above can fail.
TEST(StatsSequentialT, TheKnownVarianceLevelsReadOffStudentsTCrossTooOften) {
  const std::vector<std::size_t> sizes = looks(2, 1, 20);
  const SpendingBoundary z = spending(sizes, 0.05);
  std::vector<double> substituted;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    substituted.push_back(t_critical_two_sided(z.nominal[k], static_cast<double>(sizes[k]) - 1.0));
  const Rates r = null_crossings(sizes, substituted, 1000000);
  std::printf("substituted, %zu looks to %zu: two-sided %.5f, upper %.5f\n", sizes.size(), sizes.back(), r.any, r.upper);
  EXPECT_GT(r.upper, 0.025 + 0.0015) << "reported 0.0274 ± 0.0002 a side";
  const SequentialTBoundary b = sequential_t_boundary(sizes, z.spent);
  for (std::size_t k = 1; k < sizes.size(); ++k)
    if (std::isfinite(b.t[k])) {
      EXPECT_GT(b.t[k], substituted[k]) << "look " << k + 1 << ": the exact boundary is wider";
    }
}

// A look's boundary depends only on the looks up to it, and the answer is the same when
// asked again or as a prefix of a longer sequence (reports ask look by look).
TEST(StatsSequentialT, ALooksBoundaryDependsOnlyOnTheLooksUpToIt) {
  const std::vector<std::size_t> all = looks(4, 4, 16);
  const SpendingBoundary z = spending(all, 0.05);
  const SequentialTBoundary whole = sequential_t_boundary(all, z.spent);
  const std::vector<std::size_t> two(all.begin(), all.begin() + 2);
  const SequentialTBoundary prefix = sequential_t_boundary(two, {z.spent[0], z.spent[1]});
  EXPECT_EQ(prefix.t[0], whole.t[0]);
  EXPECT_EQ(prefix.t[1], whole.t[1]);
  const std::vector<std::size_t> other{4, 7, 16};  // failures left 7 pairs at look 2
  const SequentialTBoundary branched = sequential_t_boundary(other, {z.spent[0], z.spent[1], 0.05});
  EXPECT_EQ(branched.t[0], whole.t[0]);
  EXPECT_NE(branched.t[1], whole.t[1]);
  EXPECT_EQ(sequential_t_boundary(all, z.spent).t, whole.t) << "asked again";
  sequential_t_boundary({3, 9}, {0.01, 0.05});  // two other sequences push {4, 7, 16}'s studies out
  sequential_t_boundary({5, 6}, {0.01, 0.05});
  EXPECT_EQ(sequential_t_boundary({4, 7}, {z.spent[0], z.spent[1]}).t[1], branched.t[1]) << "simulated anew, the same";
}

}  // namespace
}  // namespace lrb::stats
