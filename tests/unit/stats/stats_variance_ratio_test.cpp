// StatsVarianceRatio: the variance a study varying only some sources would see, V(S), against
// the components it sums, and the coverage of the generalized interval of V(S1) / V(S2) by
// simulation on 3 x 3 x 3 designs (the size of a study that crosses three streams at 3 levels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "suite/core/seeds.h"
#include "suite/stats/variance_ratio.h"

namespace lrb::stats {
namespace {

TEST(StatsVarianceRatio, AStudyVaryingSomeFactorsSeesTheTermsThatInvolveThem) {
  Rng rng(11);
  std::vector<double> y;
  for (int i = 0; i < 4 * 3 * 2; ++i) y.push_back(rng.normal());
  const VarianceComponents v = crossed_variance_components({"a", "b", "c"}, {4, 3, 2}, y);
  double touching_a = 0, touching_bc = 0, all = 0;
  for (const auto& t : v.terms) {
    const auto has = [&](const char* f) { return std::find(t.factors.begin(), t.factors.end(), f) != t.factors.end(); };
    if (has("a")) touching_a += t.component;
    if (has("b") || has("c")) touching_bc += t.component;
    all += t.component;
  }
  EXPECT_NEAR(study_variance(v, {"a"}), touching_a, 1e-12);
  EXPECT_NEAR(study_variance(v, {"b", "c"}), touching_bc, 1e-12);
  EXPECT_NEAR(study_variance(v, {"a", "b", "c"}), all, 1e-12);
  // Two factors by hand: V({a}) = (MS_a − MS_ab) / n_b + MS_ab.
  const VarianceComponents two = crossed_variance_components({"a", "b"}, {3, 4}, std::vector<double>(y.begin(), y.begin() + 12));
  EXPECT_NEAR(study_variance(two, {"a"}), (two.terms[0].mean_sq - two.terms[2].mean_sq) / 4 + two.terms[2].mean_sq, 1e-12);
}

TEST(StatsVarianceRatio, ConstantDataGiveNoRatio) {
  const VarianceComponents v = crossed_variance_components({"a", "b"}, {2, 3}, std::vector<double>(6, 1.0));
  const VarianceRatio r = variance_ratio(v, {"a"}, {"b"}, 0.95, 1);
  EXPECT_FALSE(r.interval);
}

struct Truth {
  double order, init, dropout, order_init, residual;  // σ² of each term (the others 0)
};

std::vector<double> crossed_3x3x3(const Truth& s, Rng& rng) {
  double o[3], i[3], d[3], oi[3][3];
  for (auto& x : o) x = std::sqrt(s.order) * rng.normal();
  for (auto& x : i) x = std::sqrt(s.init) * rng.normal();
  for (auto& x : d) x = std::sqrt(s.dropout) * rng.normal();
  for (auto& row : oi)
    for (auto& x : row) x = std::sqrt(s.order_init) * rng.normal();
  std::vector<double> y;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) y.push_back(o[a] + i[b] + d[c] + oi[a][b] + std::sqrt(s.residual) * rng.normal());
  return y;
}

// Each tail misses at most α/2 (a verdict is decided by one end of the interval), within 4
// standard errors of the simulation; the truths include the edge of the parameter space (a
// study varying init only sees all of the variance: V(init) / V(all) = 1).
void expect_coverage(const Truth& s, const std::vector<std::string>& num, const std::vector<std::string>& den, double truth) {
  Rng rng(20261207);
  const int designs = 400;
  int below = 0, above = 0;
  for (int k = 0; k < designs; ++k) {
    const VarianceComponents v = crossed_variance_components({"order", "init", "dropout"}, {3, 3, 3}, crossed_3x3x3(s, rng));
    const VarianceRatio r = variance_ratio(v, num, den, 0.95, 1000 + static_cast<std::uint64_t>(k), 2000);
    ASSERT_TRUE(r.interval);
    const bool nested = std::all_of(num.begin(), num.end(), [&](const std::string& f) { return std::find(den.begin(), den.end(), f) != den.end(); });
    if (nested) {
      EXPECT_LE(r.interval->second, 1.0);
    }
    below += truth < r.interval->first;
    above += truth > r.interval->second;
  }
  const double tail = 0.025, se = std::sqrt(tail * (1 - tail) / designs);
  std::printf("truth %.3f: below %.4f above %.4f (each tail at most %.3f)\n", truth, below / double(designs), above / double(designs), tail);
  EXPECT_LE(below / double(designs), tail + 4 * se);
  EXPECT_LE(above / double(designs), tail + 4 * se);
}

TEST(StatsVarianceRatio, TheGeneralizedIntervalCoversAtItsLevel) {
  const Truth even{1.0, 1.0, 0.2, 0.1, 0.5};
  expect_coverage(even, {"order"}, {"init"}, (1.0 + 0.1 + 0.5) / (1.0 + 0.1 + 0.5));
  expect_coverage(even, {"init"}, {"order", "init", "dropout"}, (1.0 + 0.1 + 0.5) / (1.0 + 1.0 + 0.2 + 0.1 + 0.5));
  const Truth order_heavy{3.0, 0.5, 0.0, 0.0, 0.5};
  expect_coverage(order_heavy, {"order"}, {"init"}, 3.5 / 1.0);
  const Truth init_only{0.0, 1.0, 0.0, 0.0, 1.0};
  expect_coverage(init_only, {"init"}, {"order", "init", "dropout"}, 1.0);
  expect_coverage(init_only, {"order"}, {"init"}, 0.5);
}

}  // namespace
}  // namespace lrb::stats
