#pragma once
// Where the variance comes from: the variance components of a balanced, fully crossed
// random-effects design with one value per combination of levels (a cell's runs over, say,
// seed x order x init). Each term T (a non-empty set of factors) has a mean square MS_T with
// E[MS_T] = sum over U ⊇ T of k_U σ²_U, k_U = the product of the levels of the factors not in
// U; the term of every factor is the residual (the highest interaction, not told apart from
// noise with one value per combination). The method-of-moments (ANOVA) estimator inverts
// that: σ²_T = (1/k_T) Σ_{U ⊇ T} (−1)^{|U|−|T|} MS_U; on balanced data it equals REML where
// the estimates are positive (checked against statsmodels: tests/fixtures/stats).
// Intervals: Satterthwaite's χ² interval for a linear combination of mean squares
// (Burdick & Graybill 1992, §3), approximate, and none where the estimate is not positive.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lrb::stats {

struct VarianceTerm {
  std::vector<std::string> factors;  // one factor: a main effect; several: their interaction
  std::int64_t df = 0;
  double sum_sq = 0, mean_sq = 0;
  double component = 0;                              // σ²_T as estimated (may be negative)
  std::optional<std::pair<double, double>> interval;  // Satterthwaite, where component > 0
  double satterthwaite_df = 0;
  double share = 0;  // max(0, σ²_T) over the sum of every max(0, σ²_U)
};

struct VarianceComponents {
  std::vector<std::string> factors;
  std::vector<std::int64_t> levels;
  std::vector<VarianceTerm> terms;  // by the number of factors, then the factors' order; the residual last
  double total = 0;                 // the variance of one value: the sum of the non-negative components
  double confidence = 0.95;
  std::int64_t levels_of(const std::string& factor) const;  // a factor of `factors` (else a broken invariant)
};

// `values` holds one value per combination of levels, the last factor fastest. Each factor
// needs at least 2 levels and there must be at least 2 factors (with one, the spread of the
// values is all there is). Broken sizes are broken invariants (the caller arranged them).
VarianceComponents crossed_variance_components(const std::vector<std::string>& factors, const std::vector<std::int64_t>& levels,
                                               const std::vector<double>& values, double confidence = 0.95);

// The variance of the mean over a crossed design with `levels` of each factor (in
// v.factors' order): the sum of each term's component (negative ones as 0) over the product
// of its factors' levels.
double variance_of_mean(const VarianceComponents& v, const std::vector<std::int64_t>& levels);

// The fewest levels of factor `factor`, the others at v.levels, at which a two-sided test of
// the mean at `level` has `power` (normal approximation) when the true mean is `mean`:
// nothing when even `most` levels do not reach it (the terms without that factor set a floor).
std::optional<std::int64_t> levels_needed(const VarianceComponents& v, std::size_t factor, double mean, double level, double power,
                                          std::int64_t most = 100000);
// The same with every factor at one number of levels.
std::optional<std::int64_t> levels_needed_each(const VarianceComponents& v, double mean, double level, double power,
                                               std::int64_t most = 100000);

}  // namespace lrb::stats
